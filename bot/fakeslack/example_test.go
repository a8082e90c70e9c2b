package fakeslack_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/h9-app/h9/bot/fakeslack"
)

// A typical end-to-end test: start the fake, point the app at it (SLACK_API_URL = s.APIURL(),
// tokens from s.Options()), drive it over the socket and watch what it posts.
func Example() {
	s := fakeslack.New(fakeslack.Options{EchoBotMessages: true})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// ... start the app with s.APIURL(), "xoxb-test", "xapp-test" ...
	if err := s.WaitConnected(ctx); err != nil {
		return
	}
	if _, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "plan add a README", UserID: "U1", ChannelID: "C1"}); err != nil {
		return
	}
	var root fakeslack.Message
	_ = s.WaitFor(ctx, "the session's root message", func() bool {
		msgs := s.Messages("C1")
		if len(msgs) == 0 {
			return false
		}
		root = msgs[0]
		return true
	})
	_ = s.WaitFor(ctx, "the review buttons", func() bool {
		for _, m := range s.Thread("C1", root.TS) {
			if strings.Contains(string(m.Blocks), "Approve & auto-run") {
				return true
			}
		}
		return false
	})
	// ... s.ClickButton(ctx, "U1", "C1", reviewTS, "<the app's action_id>") ...
	fmt.Println(s.Violations()) // every payload that broke a Slack limit
}

package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// FuzzCommandAck: any /h9 text gets an answer (an ephemeral ack or work to
// do, never silence), the ack fits Socket Mode's limit, and nothing the user
// typed comes back as a live mention.
func FuzzCommandAck(f *testing.F) {
	for _, s := range []string{"", "plan", "plan x", "RUN  y", "status", "help", "bogus <!channel>", "<@U1> plan"} {
		f.Add(s)
	}
	b := &Bot{perms: newPermissions(nil, nil, nil)}
	f.Fuzz(func(t *testing.T, s string) {
		payload, work := b.commandAck(slack.SlashCommand{Text: s, UserID: "U1", ChannelID: "C1"})
		if payload == nil {
			if !work {
				t.Fatalf("%q: no answer and no work", s)
			}
			return
		}
		data, err := json.Marshal(payload)
		if err != nil || len(data) > maxAckBytes {
			t.Fatalf("%q: ack of %d bytes (err %v)", s, len(data), err)
		}
		var p struct {
			Text   string          `json:"text"`
			Blocks json.RawMessage `json:"blocks"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		for _, live := range []string{"<!channel", "<!here", "<!everyone", "<@"} {
			if strings.Contains(p.Text, live) || strings.Contains(string(p.Blocks), live) {
				t.Fatalf("%q: ack carries a live %s: %s", s, live, data)
			}
		}
	})
}

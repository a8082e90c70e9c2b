package fakeslack_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
)

// views.publish keeps a valid Home tab and refuses one over 100 blocks.
func TestViewsPublish(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	api := slack.New(s.Options().BotToken, slack.OptionAPIURL(s.APIURL()))
	home := func(n int) slack.HomeTabViewRequest {
		bs := make([]slack.Block, n)
		for i := range bs {
			bs[i] = slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "hi", false, false), nil, nil)
		}
		return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: bs}}
	}
	if _, err := api.PublishViewContext(testCtx(t), slack.PublishViewContextRequest{UserID: "U1", View: home(100)}); err != nil {
		t.Fatalf("100 blocks: %v", err)
	}
	if v := s.HomeView("U1"); !strings.Contains(string(v), `"home"`) {
		t.Errorf("HomeView = %s", v)
	}
	_, err := api.PublishViewContext(testCtx(t), slack.PublishViewContextRequest{UserID: "U1", View: home(101)})
	if err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("101 blocks: err = %v, want invalid_blocks", err)
	}
	if len(s.Violations()) != 1 {
		t.Errorf("violations = %q", s.Violations())
	}
}

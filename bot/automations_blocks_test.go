package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// An alert app's blocks, as Slack sends them in a message event: every
// part a message trigger may match is read.
func TestAutomationBlockTextReadsAllRichText(t *testing.T) {
	t.Parallel()
	raw := `[
	 {"type":"header","text":{"type":"plain_text","text":"Alert header"}},
	 {"type":"section","text":{"type":"mrkdwn","text":"section text"},"fields":[{"type":"mrkdwn","text":"*Severity*: sev1"}]},
	 {"type":"context","elements":[{"type":"mrkdwn","text":"context words"}]},
	 {"type":"rich_text","elements":[
	  {"type":"rich_text_section","elements":[{"type":"text","text":"FIRING "},{"type":"link","url":"https://grafana/d/1","text":"disk dashboard"},{"type":"text","text":" for "},{"type":"user","user_id":"U0ONCALL1"},{"type":"text","text":" in "},{"type":"channel","channel_id":"C0OPS0001"}]},
	  {"type":"rich_text_preformatted","elements":[{"type":"text","text":"df: /var 99% full"}]},
	  {"type":"rich_text_quote","elements":[{"type":"text","text":"quoted runbook step"}]},
	  {"type":"rich_text_list","style":"bullet","elements":[
	   {"type":"rich_text_section","elements":[{"type":"text","text":"host db-1"}]},
	   {"type":"rich_text_section","elements":[{"type":"link","url":"https://status/x"}]}
	  ]}
	 ]}
	]`
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range blocks.BlockSet {
		parts = append(parts, blockText(b))
	}
	got := strings.Join(parts, "\n")
	for _, want := range []string{
		"Alert header", "section text", "*Severity*: sev1", "context words",
		"FIRING disk dashboard for <@U0ONCALL1> in <#C0OPS0001>",
		"df: /var 99% full", "quoted runbook step", "host db-1", "https://status/x",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the blocks' text lacks %q:\n%s", want, got)
		}
	}
}

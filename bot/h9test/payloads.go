package h9test

import (
	"encoding/json"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

// CheckPayloads checks every message the bot sent against Slack's limits,
// through the fake's checker and render.CheckLimits.
func (f *Fakes) CheckPayloads() {
	t := f.TB
	t.Helper()
	for _, v := range f.Slack.Violations() {
		t.Errorf("fakeslack violation: %s", v)
	}
	for _, method := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral"} {
		for _, c := range f.Slack.Calls(method) {
			m := render.Message{Text: c.Params["text"]}
			if raw := c.Params["blocks"]; raw != "" {
				var bs slack.Blocks
				if err := json.Unmarshal([]byte(raw), &bs); err != nil {
					t.Errorf("%s: blocks do not decode: %v", method, err)
					continue
				}
				m.Blocks = bs.BlockSet
			}
			if err := render.CheckLimits(m); err != nil {
				t.Errorf("%s payload breaks a limit: %v", method, err)
			}
		}
	}
}

package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// wire is the shape of a chat.postMessage body, as far as blocks go.
type wire struct {
	Text   string       `json:"text"`
	Blocks slack.Blocks `json:"blocks"`
}

// mustFit fails unless m passes CheckLimits both as built and after a JSON
// round trip through slack-go's block decoder (what Slack would receive).
func mustFit(t testing.TB, m Message) {
	t.Helper()
	if err := CheckLimits(m); err != nil {
		t.Fatalf("CheckLimits: %v", err)
	}
	back := jsonRoundTrip(t, m)
	if err := CheckLimits(back); err != nil {
		t.Fatalf("CheckLimits after JSON: %v", err)
	}
	if len(back.Blocks) != len(m.Blocks) {
		t.Fatalf("JSON round trip: %d blocks, want %d", len(back.Blocks), len(m.Blocks))
	}
}

func jsonRoundTrip(t testing.TB, m Message) Message {
	t.Helper()
	data, err := json.Marshal(wire{Text: m.Text, Blocks: slack.Blocks{BlockSet: m.Blocks}})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return Message{Text: w.Text, Blocks: w.Blocks.BlockSet}
}

// texts lists every string of m a reader or Slack's parser sees.
func texts(m Message) []string {
	out := []string{m.Text}
	add := func(t *slack.TextBlockObject) {
		if t != nil {
			out = append(out, t.Text)
		}
	}
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.SectionBlock:
			add(b.Text)
			for _, f := range b.Fields {
				add(f)
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					add(t)
				}
			}
		case *slack.HeaderBlock:
			add(b.Text)
		case *slack.ActionBlock:
			for _, btn := range buttons(b) {
				add(btn.Text)
			}
		}
	}
	return out
}

// allText is every text of m joined, for substring checks.
func allText(m Message) string { return strings.Join(texts(m), "\n") }

// buttons lists the buttons of one actions block.
func buttons(b *slack.ActionBlock) []*slack.ButtonBlockElement {
	var out []*slack.ButtonBlockElement
	for _, e := range b.Elements.ElementSet {
		if btn, ok := e.(*slack.ButtonBlockElement); ok {
			out = append(out, btn)
		}
	}
	return out
}

// allButtons lists every button of m, in order.
func allButtons(m Message) []*slack.ButtonBlockElement {
	var out []*slack.ButtonBlockElement
	for _, b := range m.Blocks {
		if a, ok := b.(*slack.ActionBlock); ok {
			out = append(out, buttons(a)...)
		}
	}
	return out
}

// unescape undoes Escape, as Slack does when it displays text.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

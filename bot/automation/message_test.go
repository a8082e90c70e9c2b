package automation

import (
	"strings"
	"testing"
)

func TestMessageMatcher(t *testing.T) {
	t.Parallel()
	list, err := Parse(Source{File: "f.yaml"}, []byte(goodFile), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	a := list[1] // alerts: from B0BOT1234 or U0PERSON1, match FIRING
	base := Message{Channel: "C0ALERTS1", TS: "1700000000.000100", BotID: "B0BOT1234", Texts: []string{"", "[FIRING] alert disk on db-1"}}
	for _, c := range []struct {
		name string
		edit func(*Message)
		want bool
	}{
		{"another app's attachment", func(*Message) {}, true},
		{"a person", func(m *Message) { m.BotID, m.User = "", "U0PERSON1" }, true},
		{"by bot user ID", func(m *Message) { m.BotID, m.User = "B0OTHER12", "B0BOT1234" }, true},
		{"someone else", func(m *Message) { m.BotID, m.User = "", "U0STRANGE" }, false},
		{"another app", func(m *Message) { m.BotID = "B0OTHER12" }, false},
		{"no match", func(m *Message) { m.Texts = []string{"RESOLVED"} }, false},
		{"other channel", func(m *Message) { m.Channel = "C0123ABCD" }, false},
		{"a reply", func(m *Message) { m.ThreadTS = "1699999999.000100" }, false},
		{"a root with its own ts", func(m *Message) { m.ThreadTS = m.TS }, true},
	} {
		m := base
		c.edit(&m)
		if got := a.Matches(m); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	key, dedupe := a.MessageKeys(base)
	if key != "message:C0ALERTS1:1700000000.000100" || dedupe != "disk" {
		t.Errorf("keys %q %q", key, dedupe)
	}
	req := a.MessageRequest(base)
	if !strings.HasPrefix(req, "Look into the alert\n\n") || !strings.Contains(req, string(DataMessage)) || !strings.Contains(req, "[FIRING] alert disk") {
		t.Errorf("request %q", req)
	}
}

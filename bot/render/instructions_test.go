package render

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// sectionsText is the text of a message's section blocks, as Slack shows it.
func sectionsText(m Message) string {
	var b strings.Builder
	for _, bl := range m.Blocks {
		if s, ok := bl.(*slack.SectionBlock); ok && s.Text != nil {
			b.WriteString(s.Text.Text + "\n")
		}
	}
	return b.String()
}

// The channel's instructions are quoted, escaped and cut to the section
// limit; the Home tab adds a bounded number of channels, each quoted.
func TestInstructionsRendering(t *testing.T) {
	m := RenderInstructions("C123", "<!channel> never *touch* migrations\n"+strings.Repeat("x", 4000))
	if err := CheckLimits(m); err != nil {
		t.Fatal(err)
	}
	body := sectionsText(m)
	if strings.Contains(body, "<!channel>") || !strings.Contains(body, "&gt; &lt;!channel&gt; never") || !strings.Contains(body, "<#C123>") {
		t.Errorf("instructions rendered as %s", body)
	}
	if none := RenderInstructions("C123", ""); !strings.Contains(none.Text, "There are no instructions") {
		t.Errorf("no instructions: %q", none.Text)
	}
	var ins []ChannelInstructions
	for _, c := range []string{"C1", "C2", "C3", "C4", "C5", "C6", "C7"} {
		ins = append(ins, ChannelInstructions{Channel: c, Text: strings.Repeat("rule ", 300)})
	}
	ins = append(ins, ChannelInstructions{Channel: "C8"})
	bs := WithInstructions(RenderHome(nil, Spend{}), ins)
	home := Message{Text: "home", Blocks: bs}
	if err := CheckLimits(home); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sectionsText(home), "*Instructions for "); n != maxHomeInstructions {
		t.Errorf("home shows %d channels' instructions, want %d", n, maxHomeInstructions)
	}
}

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

// The channel's instructions are quoted and escaped, shown whole across
// as many sections as they need; the Home tab adds a bounded number of
// channels, each quoted.
func TestInstructionsRendering(t *testing.T) {
	t.Parallel()
	long := "<!channel> never *touch* migrations\n" + strings.Repeat("x", 3000) + "\n" + strings.Repeat("&", 900) + "\nthe last rule"
	m := RenderInstructions("C123", long)
	if err := CheckLimits(m); err != nil {
		t.Fatal(err)
	}
	body := sectionsText(m)
	if strings.Contains(body, "<!channel>") || !strings.Contains(body, "&gt; &lt;!channel&gt; never") || !strings.Contains(body, "<#C123>") {
		t.Errorf("instructions rendered as %s", body)
	}
	if strings.Count(body, "x") < 3000 || strings.Count(body, "&amp;") != 900 || !strings.Contains(body, "&gt; the last rule") || strings.Contains(body, "…") {
		t.Errorf("instructions of %d characters were not shown whole (%d sections)", len(long), len(m.Blocks))
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

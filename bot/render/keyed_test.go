package render

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

// A keyed message carries its key in its first block, keeps its words and
// still fits Slack's limits; a text-only one gets its text as sections.
func TestWithKey(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]Message{
		"done":      RenderDone("Finished.", planning.Progress{Total: 1, Completed: 1}),
		"stalled":   RenderStalled("T1/C1/1.1", 3),
		"text":      {Text: "Stopped by <@U1>. Reply in this thread to continue."},
		"long text": {Text: strings.Repeat("word ", 7000)},
	} {
		t.Run(name, func(t *testing.T) {
			k := WithKey(m, "done-7")
			if len(k.Blocks) == 0 || PostKey(k.Blocks[0].ID()) != "done-7" {
				t.Fatalf("first block id = %q, want the key after it", k.Blocks[0].ID())
			}
			if k.Text != m.Text {
				t.Errorf("text changed: %q", k.Text)
			}
			if err := CheckLimits(k); err != nil {
				t.Error(err)
			}
			if len(m.Blocks) > 0 && (m.Blocks[0].ID() == k.Blocks[0].ID() || !strings.HasPrefix(k.Blocks[0].ID(), m.Blocks[0].ID())) {
				t.Errorf("block id %q from %q: the original must stay as it was, the keyed one start with it", k.Blocks[0].ID(), m.Blocks[0].ID())
			}
		})
	}
	if PostKey("h9_done") != "" {
		t.Error("a block id without a key has one")
	}
}

package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/render"
)

// When the review is posted the checklist already lists the plan, even
// though edits are spaced: a reader of the review (a person, or a test
// against another Slack) never finds "No todos yet" above it.
func TestChecklistShowsPlanBeforeReview(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CoalesceInterval = 3 * time.Second })
	root, _ := e.planned("settle first", "a:pending", "b:pending")
	cl := e.checklist(root)
	if body := cl.Text + string(cl.Blocks); !strings.Contains(body, "0/2 tasks") || !strings.Contains(body, "○") {
		t.Errorf("checklist when the review appeared = %q, want the two pending todos", render.Truncate(cl.Text, 300))
	}
}

package render

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/planning"
)

// hostile is text from a user or the model trying every mrkdwn trick.
const hostile = "<!channel> <!here> <!everyone> <@U123> <#C1> <!subteam^S1> <https://evil|click> &amp; &lt;@U9&gt; ``` *b* _i_ ~s~ > quote\n\u202e\x00"

// ours is the only markup h9 itself emits: mentions of the acting user,
// permalinks, and Slack dates.
var ours = regexp.MustCompile(`^<(@U1|https://ok\.slack\.com/p1\|open thread|!date\^\d+\^\{date_short_pretty\} \{time\}\|[0-9: UTC-]+)>$`)

func TestNoForgedMarkup(t *testing.T) {
	t.Parallel()
	todos := []planning.TodoItem{todo("1", hostile, planning.TodoInProgress), todo("2", hostile, planning.TodoPending)}
	for name, m := range map[string]Message{
		"checklist":         RenderChecklist(Checklist{SessionID: hostile, Task: hostile, Todos: todos, Activity: hostile, Running: true, Unsandboxed: true}),
		"root":              RenderRoot("U1", hostile, planning.PlanModePlan),
		"review":            RenderReviewAsk(hostile, 1),
		"plan summary":      RenderPlanSummary(hostile),
		"review decided":    RenderReviewDecided("U1", hostile),
		"approval":          RenderApproval(hostile, hostile, hostile, hostile, hostile),
		"approval decided":  RenderApprovalDecided("U1", false, hostile, hostile),
		"stalled":           RenderStalled(hostile, 3),
		"done":              RenderDone(hostile, planning.Progress{}),
		"error":             RenderError(hostile, hostile),
		"interrupted":       RenderInterrupted(hostile, hostile),
		"usage":             RenderUsage(hostile),
		"status":            RenderStatus([]StatusRow{{Task: hostile, Permalink: "https://ok.slack.com/p1", Updated: time.Unix(1, 0)}, {Task: hostile, Permalink: hostile}}),
		"decided bad user":  RenderReviewDecided(hostile, LabelCancel),
		"approval bad user": RenderApprovalDecided("<!channel>", true, "bash", "ls"),
	} {
		t.Run(name, func(t *testing.T) {
			mustFit(t, m)
			for _, s := range texts(m) {
				checkMarkup(t, s)
			}
		})
	}
}

// checkMarkup fails on any <…> in s that h9 did not mean to send, and on
// control characters that survived cleaning.
func checkMarkup(t *testing.T, s string) {
	t.Helper()
	rest := s
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '>')
		if j < 0 {
			t.Fatalf("dangling < in %q", s)
		}
		if tag := rest[i : i+j+1]; !ours.MatchString(tag) {
			t.Fatalf("forged markup %q in %q", tag, s)
		}
		rest = rest[i+j+1:]
	}
	if strings.ContainsAny(s, "\x00\u202e") {
		t.Fatalf("control character kept in %q", s)
	}
}

package render

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/planning"
)

func TestRenderNotices(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("<!channel> boom & bust\n", 3000)
	for _, tc := range []struct {
		name    string
		m       Message
		want    []string
		button  string
		session string
	}{
		{"stalled", RenderStalled("s1", 3), []string{"stalled", "3 runs", "Reply in this thread with the next step"}, ActionResume, "s1"},
		{"done", RenderDone("All green.", planning.Progress{Completed: 11, Total: 11}), []string{"Done", "11/11 tasks", "All green."}, "", ""},
		{"done open", RenderDone("", planning.Progress{Completed: 2, Total: 3, Active: 1}), []string{"2/3 tasks", "1 still open"}, "", ""},
		{"done huge", RenderDone(huge, planning.Progress{Completed: 1, Total: 1}), []string{"1/1 tasks", "&lt;!channel&gt;", "…"}, "", ""},
		{"error", RenderError("s2", "the model endpoint did not answer after 4 tries"), []string{"Something went wrong", "4 tries", "Retry"}, ActionRetry, "s2"},
		{"error empty", RenderError("s2", ""), []string{"unknown error"}, ActionRetry, "s2"},
		{"error huge", RenderError("s2", huge), []string{"&lt;!channel&gt;"}, ActionRetry, "s2"},
		{"interrupted", RenderInterrupted("s3", "h9 restarted while waiting for a step approval"), []string{"Interrupted", "waiting for a step approval", "Resume"}, ActionResume, "s3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustFit(t, tc.m)
			for _, w := range tc.want {
				if !strings.Contains(allText(tc.m), w) {
					t.Errorf("missing %q in %.500s", w, allText(tc.m))
				}
			}
			bs := allButtons(tc.m)
			if tc.button == "" {
				if len(bs) != 0 {
					t.Fatalf("unexpected buttons")
				}
				return
			}
			if len(bs) != 1 {
				t.Fatalf("%d buttons, want 1", len(bs))
			}
			checkButton(t, bs[0], tc.button, ChoiceLabel(tc.button), ButtonValue{SessionID: tc.session})
		})
	}
}

func TestStalledTextSaysStalled(t *testing.T) {
	t.Parallel()
	if m := RenderStalled("s", 3); !strings.Contains(m.Text, "stalled") {
		t.Fatalf("fallback text %q lacks \"stalled\"", m.Text)
	}
}

func TestRenderRoot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		user string
		task string
		mode planning.PlanMode
		want []string
	}{
		{"plan", "U1", "fix the build", planning.PlanModePlan, []string{"<@U1> asked h9 to plan", "fix the build"}},
		{"run", "U1", "bump deps", planning.PlanModeDefault, []string{"asked h9 to run", "bump deps"}},
		{"hostile", "U1", "<!channel> <@U2> <https://x|y>", planning.PlanModePlan, []string{"&lt;!channel&gt; &lt;@U2&gt; &lt;https://x|y&gt;"}},
		{"huge", "U1", strings.Repeat("word ", 10000), planning.PlanModePlan, []string{"…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := RenderRoot(tc.user, tc.task, tc.mode)
			mustFit(t, m)
			for _, w := range tc.want {
				if !strings.Contains(allText(m), w) {
					t.Errorf("missing %q in %.300s", w, allText(m))
				}
			}
			if !strings.Contains(m.Text, "<@"+tc.user+">") {
				t.Errorf("fallback %q does not name the user", m.Text)
			}
		})
	}
}

func TestRenderAgentText(t *testing.T) {
	t.Parallel()
	m := RenderAgentText("**Done**: see <!channel> and [docs](https://example.com/d)")
	mustFit(t, m)
	got := allText(m)
	for _, want := range []string{"*Done*", "&lt;!channel&gt;", "<https://example.com/d|docs>"} {
		if !strings.Contains(got, want) {
			t.Errorf("agent text %q lacks %q", got, want)
		}
	}
}

package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/planning"
)

func TestRenderStatus(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	rows := []StatusRow{
		{Task: "older", State: "done", Progress: planning.Progress{Completed: 2, Total: 2}, Permalink: "https://x.slack.com/archives/C1/p1", Updated: t0,
			Repo: &RepoLine{Repo: "backend", Branch: "h9/older-abc123"}},
		{Task: "newer <!here>", State: "running", Progress: planning.Progress{Completed: 3, Total: 11, Active: 8}, Permalink: "https://x.slack.com/archives/C1/p2", Updated: t0.Add(time.Hour)},
		{Task: "bad link", State: "stalled", Permalink: "https://evil|<!channel>"},
	}
	m := RenderStatus(rows)
	mustFit(t, m)
	text := allText(m)
	for _, w := range []string{"newer &lt;!here&gt;", "running", "3/11 tasks", "<https://x.slack.com/archives/C1/p2|open thread>", "2/2 tasks", "repository backend, branch h9/older-abc123", "stalled", "0/0 tasks", "<!date^1735787045^"} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in %s", w, text)
		}
	}
	if strings.Index(text, "newer") > strings.Index(text, "older") || strings.Index(text, "older") > strings.Index(text, "bad link") {
		t.Errorf("not most recent first: %s", text)
	}
	if strings.Contains(text, "evil") {
		t.Errorf("unsafe permalink rendered")
	}
}

func TestRenderStatusEmpty(t *testing.T) {
	t.Parallel()
	m := RenderStatus(nil)
	mustFit(t, m)
	if !strings.Contains(allText(m), "no sessions in this channel yet") {
		t.Fatalf("got %q", allText(m))
	}
}

func TestRenderStatusCapped(t *testing.T) {
	t.Parallel()
	rows := make([]StatusRow, 1000)
	for i := range rows {
		rows[i] = StatusRow{Task: strings.Repeat("t", 1000), State: "idle",
			Permalink: "https://x.slack.com/archives/C1/p" + fmt.Sprint(i), Updated: time.Unix(int64(i), 0)}
	}
	m := RenderStatus(rows)
	mustFit(t, m)
	if !strings.Contains(allText(m), " more") || !strings.Contains(allText(m), "/p999|") {
		t.Fatalf("expected the newest first and \"…and N more\"")
	}
}

func TestRenderHelpAndUsage(t *testing.T) {
	t.Parallel()
	for _, m := range []Message{RenderHelp(), RenderUsage("plan"), RenderUsage("<!channel>")} {
		mustFit(t, m)
		text := allText(m)
		for _, w := range []string{"/h9 plan", "/h9 run", "/h9 status", "/h9 help", "@h9", "thread"} {
			if !strings.Contains(text, w) {
				t.Errorf("help lacks %q", w)
			}
		}
		if strings.Contains(text, "<!channel>") {
			t.Errorf("unescaped input in usage")
		}
	}
}

// The text, not only the blocks, lists each session with its x/y tasks.
func TestStatusTextCarriesProgress(t *testing.T) {
	t.Parallel()
	m := RenderStatus([]StatusRow{{Task: "add healthz", State: "running", Progress: planning.Progress{Completed: 1, Total: 3, Active: 2}}})
	if !strings.Contains(m.Text, "1/3 tasks") || !strings.Contains(m.Text, "add healthz") {
		t.Errorf("status text = %q", m.Text)
	}
}

package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/planning"
)

func TestRenderHome(t *testing.T) {
	t.Parallel()
	empty := RenderHome(nil, Spend{})
	var rows []HomeRow
	for i := range 500 {
		rows = append(rows, HomeRow{Channel: "C1", StatusRow: StatusRow{
			Task: "<!channel> task " + strings.Repeat("x", i%300), State: "running",
			Progress:  planning.Progress{Completed: 1, Total: 3, Active: 2},
			Permalink: "https://fake.slack/archives/C1/p1", Updated: time.Unix(1700000000, 0),
		}})
	}
	rows = append(rows, HomeRow{Channel: "<!here>", StatusRow: StatusRow{Task: "odd channel"}})
	full := RenderHome(rows, Spend{})
	for name, bs := range map[string]any{"empty": empty, "full": full} {
		s := homeJSON(bs)
		if strings.Contains(s, "<!channel>") || strings.Contains(s, "<!here>") {
			t.Errorf("%s: unescaped ping: %s", name, s)
		}
		for _, want := range []string{"/h9 plan", "/h9 run", "@h9", "Your recent sessions"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if len(full) > MaxHomeBlocks {
		t.Errorf("%d blocks", len(full))
	}
	if err := CheckLimits(Message{Text: "home", Blocks: full}); err != nil {
		t.Error(err)
	}
	s := homeJSON(full)
	for _, want := range []string{"1/3 tasks", "running", "<#C1>", "open thread", "more"} {
		if !strings.Contains(s, want) {
			t.Errorf("home lacks %q", want)
		}
	}
}

// homeJSON is the view's JSON with <, > and & as themselves.
func homeJSON(v any) string {
	data, _ := json.Marshal(v)
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(data))
}

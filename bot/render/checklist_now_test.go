package render

import (
	"strings"
	"testing"
	"time"
)

func TestNowLineElapsed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		activity string
		d        time.Duration
		want     string
	}{
		{"bash: go test ./...", 35*time.Second + 400*time.Millisecond, "*Now:* `bash: go test ./...` · 35s"},
		{"bash: make", 125 * time.Second, "*Now:* `bash: make` · 2m05s"},
		{"bash: ls", 300 * time.Millisecond, "*Now:* `bash: ls`\""},
		{"", 10 * time.Second, "*Now:* working…\""},
	} {
		m := RenderChecklist(Checklist{SessionID: "s", Task: "t", Running: true, Activity: c.activity, ActivityFor: c.d})
		all := strings.Join(texts(m), "\n") + "\n"
		if !strings.Contains(all, strings.TrimSuffix(c.want, "\"")) || (strings.HasSuffix(c.want, "\"") && !strings.Contains(all, strings.TrimSuffix(c.want, "\"")+"\n")) {
			t.Errorf("%q after %s: no %q in %s", c.activity, c.d, c.want, all)
		}
	}
}

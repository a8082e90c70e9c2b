package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A chatty server's stderr is cut to its end on doctor's one line.
func TestStderrTail(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é noise\n", 100) + "fatal: no config"
	got := stderrTail(long)
	if len(got) > 300+len("…") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "fatal: no config") || !utf8.ValidString(got) || strings.Contains(got, "\n") {
		t.Errorf("stderrTail = %q", got)
	}
	if got := stderrTail("short\nerror"); got != "short error" {
		t.Errorf("a short stderr: %q", got)
	}
}

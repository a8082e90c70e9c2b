package textcut

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	if got := HeadTail("short", 10); got != "short" {
		t.Errorf("a text within the limit changed: %q", got)
	}
	s := "HEAD" + strings.Repeat("é", 50_000) + "TAIL"
	got := HeadTail(s, 1000)
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") {
		t.Errorf("lost the head or the tail: %.20q … %q", got, got[len(got)-20:])
	}
	if !utf8.ValidString(got) {
		t.Error("the cut split a rune")
	}
	if len(got) > 1000+60 {
		t.Errorf("%d bytes, want about 1000", len(got))
	}
	head, rest, found := strings.Cut(got, "\n[... ")
	var n int
	_, err := fmt.Sscanf(rest, "%d bytes omitted ...]\n", &n)
	tail := rest[strings.Index(rest, "]\n")+2:]
	if !found || err != nil || len(head)+n+len(tail) != len(s) {
		t.Errorf("the note does not say how much was left out: %d+%d+%d of %d (%v)", len(head), n, len(tail), len(s), err)
	}
}

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"a\nb\nc\n\n\n", 1, "c"},
		{"", 3, ""},
		{"one", 1, "one"},
		{"a\n\nb", 2, "\nb"},
		{"a\nb", 0, ""},
	} {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

package forge

import (
	"fmt"
	"strings"
	"testing"
)

// The tail of a log written in pieces of any size is its last lines, an
// unfinished last line included, each line cut at maxLineBytes.
func TestTailWriterKeepsTheLastLines(t *testing.T) {
	var log strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	log.WriteString("unfinished")
	for _, chunk := range []int{1, 7, 4096, 1 << 20} {
		tw := newTailWriter(3)
		s := log.String()
		for len(s) > 0 {
			n := min(chunk, len(s))
			tw.Write([]byte(s[:n]))
			s = s[n:]
		}
		if got := tw.String(); got != "line 999\nline 1000\nunfinished" {
			t.Errorf("chunks of %d: %q", chunk, got)
		}
	}
	tw := newTailWriter(2)
	tw.Write([]byte("a\n" + strings.Repeat("x", 3*maxLineBytes) + "\nb\n"))
	if got := tw.String(); got != strings.Repeat("x", maxLineBytes)+"\nb" {
		t.Errorf("a long line: %d bytes", len(got))
	}
	if got := newTailWriter(2).String(); got != "" {
		t.Errorf("empty: %q", got)
	}
}

package forge

import (
	"bytes"
	"strings"
)

// tailWriter keeps the last n lines written to it, each cut at
// maxLineBytes, in memory bounded by n lines whatever the log's size: a
// CI log of hundreds of megabytes is read through, never held.
type tailWriter struct {
	n       int
	lines   []string // a ring of the last complete lines
	next    int      // where the ring writes next
	full    bool
	partial []byte // the line being written
}

const maxLineBytes = 4 << 10

func newTailWriter(n int) *tailWriter { return &tailWriter{n: n, lines: make([]string, n)} }

func (t *tailWriter) Write(p []byte) (int, error) {
	written := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.keep(p)
			break
		}
		t.keep(p[:i])
		t.push()
		p = p[i+1:]
	}
	return written, nil
}

func (t *tailWriter) keep(p []byte) {
	if room := maxLineBytes - len(t.partial); room > 0 {
		t.partial = append(t.partial, p[:min(room, len(p))]...)
	}
}

func (t *tailWriter) push() {
	t.lines[t.next] = string(t.partial)
	t.partial = t.partial[:0]
	t.next = (t.next + 1) % t.n
	t.full = t.full || t.next == 0
}

// String is the kept lines, oldest first, and an unfinished last line.
func (t *tailWriter) String() string {
	var out []string
	if t.full {
		out = append(out, t.lines[t.next:]...)
	}
	out = append(out, t.lines[:t.next]...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
		if len(out) > t.n {
			out = out[1:]
		}
	}
	return strings.Join(out, "\n")
}

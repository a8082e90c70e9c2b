package workspace

import (
	"fmt"
	"unicode/utf8"
)

// MaxOutputChars caps bash output; the head and the tail are kept because
// errors tend to be at the end and context at the start. With the cut note and
// the exit line it stays under the agent's 30 000-byte cap on a tool result,
// so the output is cut once and the note's count is right.
const MaxOutputChars = 28_000

// headTail keeps the first and last half of everything written to it.
type headTail struct {
	head  []byte
	tail  []byte // ring buffer once full
	start int    // ring start within tail
	total int
	half  int
}

func newHeadTail(limit int) *headTail { return &headTail{half: limit / 2} }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += n
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= h.half {
			p = p[len(p)-h.half:]
			copy(h.tail, p)
			h.start = 0
			return n, nil
		}
		k := copy(h.tail[h.start:], p)
		copy(h.tail, p[k:])
		h.start = (h.start + len(p)) % h.half
		p = nil
	}
	return n, nil
}

// String joins head and tail, with a marker saying how much was cut.
func (h *headTail) String() string {
	tail := append(append([]byte(nil), h.tail[h.start:]...), h.tail[:h.start]...)
	cut := h.total - len(h.head) - len(tail)
	if cut <= 0 {
		return string(h.head) + string(tail)
	}
	head := trimToRune(h.head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	cut = h.total - len(head) - len(tail)
	return fmt.Sprintf("%s\n… [%d bytes of output cut; showing the first %d and last %d] …\n%s", head, cut, len(head), len(tail), tail)
}

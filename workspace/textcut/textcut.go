// Package textcut cuts text for the model the one way h9 does it: the
// head and the tail kept, since what matters in output (an error, a
// summary) tends to be at either end, and the cut said in between.
package textcut

import (
	"fmt"
	"strings"
)

// HeadTail cuts s to about limit bytes, keeping its head and its tail and
// naming how many bytes were left out between them. A rune split at
// either edge is dropped, so the result is valid UTF-8 wherever s was.
func HeadTail(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	half := limit / 2
	head := strings.ToValidUTF8(s[:half], "")
	tail := strings.ToValidUTF8(s[len(s)-half:], "")
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, len(s)-len(head)-len(tail), tail)
}

// LastLines is the end of s, at most n lines, without its trailing
// newlines: the tail of a log or of a command's output, where the error
// usually is.
func LastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n <= 0 {
		return ""
	}
	i := len(s)
	for range n {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}

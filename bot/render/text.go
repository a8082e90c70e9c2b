package render

import "strings"

// ellipsis marks every cut; it is one UTF-16 unit.
const ellipsis = "…"

// Len is the length Slack limits are checked against: UTF-16 code units.
// It is never less than the number of characters Slack counts (astral
// characters such as most emoji count twice), so it errs on the safe side.
func Len(s string) int {
	n := 0
	for _, r := range s {
		n += runeLen(r)
	}
	return n
}

func runeLen(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Truncate cuts s to at most max UTF-16 units (see Len), never inside a
// rune, ending with "…" when something was cut. max < 1 gives "".
func Truncate(s string, max int) string {
	if Len(s) <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	budget, n := max-Len(ellipsis), 0
	for i, r := range s {
		if n+runeLen(r) > budget {
			return s[:i] + ellipsis
		}
		n += runeLen(r)
	}
	return s
}

// clean makes model or user text safe to lay out: valid UTF-8, no control
// characters but newline and tab, no bidi overrides (which can make a line
// read differently from what it says), CR/LF folded to LF.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case r < 0x20, r >= 0x7f && r < 0xa0:
			return -1
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
}

// OneLine cleans s and collapses all whitespace, newlines included, to single
// spaces: one todo is one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

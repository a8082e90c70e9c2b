package render

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// packCapacity is how many units of lines (each counted as Len+1 for its
// newline, none longer than maxLine) always pack into n sections: a section
// is only closed when the next line does not fit, so each closed section
// holds more than MaxSectionText-maxLine units.
func packCapacity(n, maxLine int) int { return n * (MaxSectionText - maxLine) }

// fitLines is the longest prefix of lines that fits in capacity units,
// each line costing Len+1 (see packCapacity).
func fitLines(lines []string, capacity int) []string {
	used := 0
	for i, l := range lines {
		if used += Len(l) + 1; used > capacity {
			return lines[:i]
		}
	}
	return lines
}

// packLines groups safe lines, each at most MaxSectionText-1 units, into as
// few sections as they fit in, with block ids prefix_0, prefix_1, ….
func packLines(prefix string, lines []string) []slack.Block {
	var out []slack.Block
	var cur strings.Builder
	curLen := 0
	flush := func() {
		if curLen > 0 {
			out = append(out, section(prefix+"_"+strconv.Itoa(len(out)), cur.String()))
			cur.Reset()
			curLen = 0
		}
	}
	for _, l := range lines {
		n := Len(l)
		if curLen > 0 && curLen+1+n > MaxSectionText {
			flush()
		}
		if curLen > 0 {
			cur.WriteByte('\n')
			curLen++
		}
		cur.WriteString(l)
		curLen += n
	}
	flush()
	return out
}

// textSections splits safe mrkdwn text into at most maxSections sections,
// cutting at line ends where it can and never through an entity; what does
// not fit is dropped and marked with "…".
func textSections(prefix, s string, maxSections int) []slack.Block {
	var out []slack.Block
	for s != "" && len(out) < maxSections {
		id := prefix + "_" + strconv.Itoa(len(out))
		if Len(s) <= MaxSectionText {
			out = append(out, section(id, s))
			break
		}
		if len(out) == maxSections-1 {
			cut := safeCut(s, MaxSectionText-Len(ellipsis))
			out = append(out, section(id, s[:cut]+ellipsis))
			break
		}
		cut := safeCut(s, MaxSectionText)
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > cut/2 {
			cut = nl
		}
		if chunk := strings.TrimRight(s[:cut], "\n"); strings.TrimSpace(chunk) != "" {
			out = append(out, section(id, chunk))
		}
		s = strings.TrimLeft(s[cut:], "\n")
	}
	return out
}

// safeCut returns the byte length of the longest prefix of s within max
// units that does not end inside an &amp;/&lt;/&gt; entity. It is at least
// one rune when max allows, so splitting always progresses.
func safeCut(s string, max int) int {
	n, cut := 0, len(s)
	for i, r := range s {
		if n+runeLen(r) > max {
			cut = i
			break
		}
		n += runeLen(r)
	}
	if amp := strings.LastIndexByte(s[:cut], '&'); amp >= 0 && cut-amp < len("&amp;") &&
		!strings.Contains(s[amp:cut], ";") && amp > 0 {
		cut = amp
	}
	return cut
}

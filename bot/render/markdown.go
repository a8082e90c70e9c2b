package render

import (
	"regexp"
	"strings"
)

// Model text is Markdown; Slack shows mrkdwn. Markdown maps the common forms
// and nothing else, after escaping, so no input can produce a mention, a
// channel ping or a link other than an http(s) URL the input spelled out.

var (
	// headingRE is an ATX heading: "# Title", up to six #, optional closing #s.
	headingRE = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	// linkRE is [text](http(s)://url); text without brackets or "|", URL
	// without spaces, parentheses, angle brackets or "|".
	linkRE = regexp.MustCompile(`\[([^\[\]|\n]+)\]\((https?://[^\s()<>|]+)\)`)
	// boldRE and underRE run on escaped text (entities hold no * or _).
	boldRE  = regexp.MustCompile(`\*\*([^*\s](?:[^*]*[^*\s])?)\*\*`)
	underRE = regexp.MustCompile(`__([^_\s](?:[^_]*[^_\s])?)__`)
)

// Markdown converts model Markdown to safe mrkdwn: everything is escaped,
// then **bold** → *bold*, __x__ → _x_, "# Heading" → *Heading*, and
// [text](https://url) → <https://url|text>. Fenced code blocks and `inline
// code` are escaped but otherwise left as they are.
func Markdown(s string) string {
	lines := strings.Split(clean(s), "\n")
	inFence := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			if !inFence && strings.Count(trimmed, "```") == 1 {
				trimmed = "```" // an info string ("```go") would show as code
			}
			if strings.Count(trimmed, "```")%2 == 1 {
				inFence = !inFence
			}
			lines[i] = Escape(trimmed)
		case inFence:
			lines[i] = Escape(line)
		default:
			lines[i] = markdownLine(line)
		}
	}
	return strings.Join(lines, "\n")
}

// markdownLine converts one line outside a code block.
func markdownLine(line string) string {
	if m := headingRE.FindStringSubmatch(line); m != nil && strings.TrimSpace(m[1]) != "" {
		inner := strings.Trim(markdownInline(m[1]), "*")
		if strings.TrimSpace(inner) == "" {
			return markdownInline(m[1])
		}
		return "*" + inner + "*"
	}
	return markdownInline(line)
}

// markdownInline keeps `code` spans and converts the text between them.
func markdownInline(s string) string {
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1: // inside a closed `span`
			b.WriteString("`" + Escape(p) + "`")
		case i%2 == 1: // a lone backtick: literal
			b.WriteString("`" + markdownText(p))
		default:
			b.WriteString(markdownText(p))
		}
	}
	return b.String()
}

// markdownText converts links and emphasis in text holding no code span.
func markdownText(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range linkRE.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(emphasis(Escape(s[last:m[0]])))
		text, url := s[m[2]:m[3]], s[m[4]:m[5]]
		b.WriteString("<" + Escape(url) + "|" + emphasis(Escape(text)) + ">")
		last = m[1]
	}
	b.WriteString(emphasis(Escape(s[last:])))
	return b.String()
}

// emphasis maps **bold** and __underline-italic__ on escaped text.
func emphasis(s string) string {
	s = boldRE.ReplaceAllString(s, "*$1*")
	return underRE.ReplaceAllString(s, "_${1}_")
}

// markdownCut is Markdown(s) within max units, cut on the input side so the
// cut never splits an entity or a link, ending with "…" when cut.
func markdownCut(s string, max int) string {
	s = strings.TrimSpace(s)
	if out := Markdown(s); Len(out) <= max {
		return out
	}
	if max < 1 {
		return ""
	}
	// The longest input prefix (in runes) whose conversion fits.
	runes := []rune(s)
	lo, hi := 0, len(runes)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if Len(Markdown(string(runes[:mid])))+Len(ellipsis) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return Markdown(string(runes[:lo])) + ellipsis
}

package render

import (
	"strings"
)

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Escape makes s literal in mrkdwn: &, < and > become entities, so text from a
// user or the model can never become <!channel>, <!here>, a <@U…> mention or
// a <url|label> link. Slack shows the original characters. (Bare "@channel"
// only pings when a message is posted with link_names, which h9 never sets.)
func Escape(s string) string { return escaper.Replace(s) }

// escLen is how long r is once escaped.
func escLen(r rune) int {
	switch r {
	case '&':
		return len("&amp;")
	case '<', '>':
		return len("&lt;")
	}
	return runeLen(r)
}

// escapeCut escapes s and cuts it to at most max units, never through an
// entity, ending with "…" when cut. Cutting before escaping would let the
// entities push the result over max; cutting after could split "&amp;".
func escapeCut(s string, max int) string {
	total := 0
	for _, r := range s {
		total += escLen(r)
	}
	if total <= max {
		return Escape(s)
	}
	if max < 1 {
		return ""
	}
	budget, n := max-Len(ellipsis), 0
	for i, r := range s {
		if n+escLen(r) > budget {
			return Escape(s[:i]) + ellipsis
		}
		n += escLen(r)
	}
	return Escape(s)
}

// safeLine is model/user text as one escaped line of at most max units.
func safeLine(s string, max int) string { return escapeCut(OneLine(s), max) }

// safeText is model/user text, newlines kept, escaped, at most max units.
func safeText(s string, max int) string { return escapeCut(strings.TrimSpace(clean(s)), max) }

// codeBlock wraps text in a ``` fence of at most max units. Runs of three
// backticks inside are broken with a zero-width space so they cannot close
// the fence early.
func codeBlock(s string, max int) string {
	const open, close = "```\n", "\n```"
	s = clean(s)
	for strings.Contains(s, "```") {
		s = strings.ReplaceAll(s, "```", "``\u200b`")
	}
	s = strings.Trim(s, "\n")
	if s == "" {
		s = " "
	}
	return open + escapeCut(s, max-Len(open)-Len(close)) + close
}

// mention renders <@userID> for a well-formed Slack user id and a neutral
// word otherwise, so a forged id can never inject markup.
func mention(userID string) string {
	if !validUserID(userID) {
		return "someone"
	}
	return "<@" + userID + ">"
}

// validUserID accepts Slack user ids: U or W, then upper-case letters and digits.
func validUserID(id string) bool {
	if len(id) < 2 || len(id) > 32 || (id[0] != 'U' && id[0] != 'W') {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool {
		return (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	}) < 0
}

// inlineCode shows one line of model/user text as `code`; backticks inside
// would close the span, so they become quotes.
func inlineCode(s string, max int) string {
	s = strings.ReplaceAll(OneLine(s), "`", "'")
	if s == "" {
		return "` `"
	}
	return "`" + escapeCut(s, max-2) + "`"
}

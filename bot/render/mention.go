package render

import "strings"

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
	s = strings.ReplaceAll(oneLine(s), "`", "'")
	if s == "" {
		return "` `"
	}
	return "`" + escapeCut(s, max-2) + "`"
}

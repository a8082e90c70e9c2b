package gitrepo

import (
	"crypto/rand"
	"strings"
	"unicode"
)

// BranchPrefix starts every session branch.
const BranchPrefix = "h9/"

// maxSlug bounds the words of the task in a branch name.
const maxSlug = 40

// NewBranch names a new session's branch: h9/, a few words of the task,
// and a random suffix that makes it unique per thread (one in about 10^9
// to meet another; Prepare refuses a branch the remote already has).
func NewBranch(task string) string {
	var b [6]byte
	rand.Read(b[:])
	const digits = "abcdefghijklmnopqrstuvwxyz234567"
	suffix := make([]byte, len(b))
	for i, c := range b {
		suffix[i] = digits[c&31]
	}
	if slug := slugOf(task); slug != "" {
		return BranchPrefix + slug + "-" + string(suffix)
	}
	return BranchPrefix + "task-" + string(suffix)
}

// slugOf is the first words of s in lower-case ASCII letters and digits,
// joined by '-'.
func slugOf(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		switch {
		case ok && dash && b.Len() > 0:
			b.WriteByte('-')
			fallthrough
		case ok:
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= maxSlug {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// ValidBranch applies git check-ref-format's rules to a branch name, so a
// name from Slack or the configuration never reaches git unchecked.
func ValidBranch(name string) bool {
	if name == "" || len(name) > 200 || name == "@" || strings.HasPrefix(name, "-") ||
		strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//") {
		return false
	}
	if strings.ContainsFunc(name, func(r rune) bool {
		return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r)
	}) {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	return true
}

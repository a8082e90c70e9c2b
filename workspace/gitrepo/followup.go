package gitrepo

import "strings"

// What h9 does with review feedback and failing checks on a request it
// opened (a repo entry's follow_up; ARCHITECTURE.md,
// "Following a request").
const (
	FollowAsk  = "ask"  // post each batch with Address feedback and Ignore (the default)
	FollowAuto = "auto" // start addressing each batch at once
	FollowOff  = "off"  // do not follow
)

func validFollowUp(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", FollowAsk, FollowAuto, FollowOff:
		return true
	}
	return false
}

// FollowMode is the repository's follow_up, ask when unset.
func (r Repo) FollowMode() string {
	if m := strings.ToLower(strings.TrimSpace(r.FollowUp)); m != "" {
		return m
	}
	return FollowAsk
}

package forge

import "testing"

// GitLab says who assigned an issue only in its system note: "assigned to
// @a", "assigned to @a and @b", "assigned to @a and unassigned @b".
func TestGitLabAssignsNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body, user string
		want       bool
	}{
		{"assigned to @h9-bot", "h9-bot", true},
		{"assigned to @alice and @H9-bot", "h9-bot", true},
		{"assigned to @alice, @bob and @h9-bot", "h9-bot", true},
		{"assigned to @alice and unassigned @h9-bot", "h9-bot", false},
		{"unassigned @h9-bot", "h9-bot", false},
		{"assigned to @h9-bot2", "h9-bot", false},
		{"mentioned in assigned to @h9-bot", "h9-bot", false},
	} {
		if got := assigns(tc.body, tc.user); got != tc.want {
			t.Errorf("assigns(%q, %q) = %v, want %v", tc.body, tc.user, got, tc.want)
		}
	}
}

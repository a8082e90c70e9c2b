package keyhint

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"url", "url", 0},
		{"brnach", "branch", 2}, {"comand", "command", 1}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestUnknown(t *testing.T) {
	t.Parallel()
	known := []string{"name", "url", "branch", "channels"}
	synonyms := map[string]string{"repo": "url", "ref": "branch", "cron": "schedule"}
	for _, c := range []struct{ key, want string }{
		{"brnach", `unknown key "brnach" (did you mean "branch"?)`},
		{"REPO", `unknown key "REPO" (did you mean "url"?)`},
		{"Name", `unknown key "Name" (did you mean "name"?)`},
		{"zzzzzz", `unknown key "zzzzzz" (the keys here are name, url, branch, channels)`},
		// A synonym for a key that is not allowed here is not offered.
		{"cron", `unknown key "cron" (the keys here are name, url, branch, channels)`},
	} {
		if got := Unknown(c.key, known, synonyms); got != c.want {
			t.Errorf("Unknown(%q) = %s, want %s", c.key, got, c.want)
		}
	}
}

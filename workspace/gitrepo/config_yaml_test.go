package gitrepo

import (
	"strings"
	"testing"
)

// A mistake in H9_REPOS_FILE is reported with its line, in the file's own
// words: keys and kinds of value, never the decoder's Go types.
func TestParseFileExplainsMistakes(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"repos:\n  - name: api\n    repo: https://example.com/api.git\n", `line 3: unknown key "repo" (did you mean "url"?)`},
		{"repos:\n  - name: api\n    url: x\n    brnach: main\n", `line 4: unknown key "brnach" (did you mean "branch"?)`},
		{"repo:\n  - name: api\n", `line 1: unknown key "repo" (did you mean "repos"?)`},
		{"repos:\n  - name: api\n    url: x\n    zzz: 1\n", `line 4: unknown key "zzz" (the keys here are name, url, branch, setup, channels, github, network, secrets, forge, follow_up)`},
		{"repos:\n  - name: api\n    url: x\n    channels: C123\n", "line 4: text where a list was expected"},
		{"repos:\n  name: api\n", "line 2: a mapping where a list of repositories (- name: …) was expected"},
		{"repos:\n  - name: [a]\n", "line 2: a list where text was expected"},
		{"repos:\n  - name: api\n   url: x\n", "line 2: did not find expected"},
	}
	for _, c := range cases {
		_, err := ParseFile([]byte(c.yaml))
		if err == nil {
			t.Errorf("%q: accepted", c.yaml)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.yaml, msg, c.want)
		}
		if strings.Contains(msg, "gitrepo.") || strings.Contains(msg, "struct") || strings.Contains(msg, "!!") {
			t.Errorf("%q: Go types or YAML tags in %s", c.yaml, msg)
		}
	}
}

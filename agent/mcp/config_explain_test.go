package mcp

import (
	"strings"
	"testing"
)

// A misspelt key and a file that is a list get the user's words: the key
// meant, the shape expected, and no Go type.
func TestParseExplainsYAMLMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"servers:\n  - name: a\n    comand: ./srv\n", `unknown key "comand" (did you mean "command"?)`},
		{"- name: a\n  url: https://x/\n", "a list where a mapping with servers: (a list of servers: - name: …) was expected"},
		{"servers:\n  name: a\n", "a mapping where a list of servers (- name: …) was expected"},
	} {
		_, err := Parse([]byte(tc.file), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", tc.file, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "mcp.") {
			t.Errorf("Parse(%q) names a Go type: %v", tc.file, err)
		}
	}
}

package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func env(k string) (string, bool) {
	if k == "SET" {
		return "Bearer abcdefgh", true
	}
	return "", false
}

func TestParseErrorsAreOneLineInUsersWords(t *testing.T) {
	t.Parallel()
	cases := []struct{ yaml, want string }{
		{"servers:\n- name: a\n", `server 1 ("a"): set exactly one of url and command`},
		{"servers:\n- name: a\n  url: http://x\n  command: ./s\n", "set exactly one of url and command"},
		{"servers:\n- url: http://x\n", "server 1: name is missing"},
		{"servers:\n- name: a.b\n  url: http://x\n", "only letters, digits, _ and -"},
		{"servers:\n- name: a__b\n  url: http://x\n", `no "__"`},
		{"servers:\n- name: x_\n  url: http://x\n", `not ending in _`}, // x___y would be x's tool _y too
		{"servers:\n- name: a\n  url: http://x\n- name: A\n  url: http://y\n", `server 2 ("A"): name is used by an earlier server`},
		{"servers:\n- name: a\n  url: ftp://x\n", "url must be an http:// or https:// address"},
		{"servers:\n- name: a\n  url: https://u:p@x\n", "must not carry a password"},
		{"servers:\n- name: a\n  url: http://x\n  headers_env: {Authorization: UNSET}\n", "headers_env Authorization names UNSET, which is not set"},
		{"servers:\n- name: a\n  command: ./s\n  headers_env: {Authorization: SET}\n", "headers_env is for url servers only"},
		{"servers:\n- name: a\n  url: http://x\n  headers_env: {\"Bad Header\": SET}\n", "is not a header name"},
		{"servers:\n- name: a\n  url: http://x\n  tools: [\"\"]\n", "tools has an empty entry"},
		{"servers:\n- name: a\n  url: http://x\n  token: x\n", "not a valid servers file"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml), env)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "H9_MCP_FILE: ") {
			t.Errorf("%q: err = %v, want one line with %q", c.yaml, err, c.want)
		}
	}
	s, err := Parse([]byte("servers:\n- name: jira\n  url: https://mcp.example.com/mcp\n  headers_env: {Authorization: SET}\n  repos: [acme/api]\n"), env)
	if err != nil || len(s) != 1 || s[0].Headers["Authorization"] != "Bearer abcdefgh" || s[0].Kind() != "remote" {
		t.Fatalf("a good file: %+v, %v", s, err)
	}
}

func TestExposedNamesFitTheModelAPIAndAreDeterministic(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("t", 80)
	tools := []string{"search", "get.issue", "get_issue", long, long + "2", "bash"}
	a := exposedNames("srv", tools)
	b := exposedNames("srv", []string{"bash", long + "2", "get_issue", long, "get.issue", "search"})
	seen := map[string]bool{}
	for _, tl := range tools {
		n := a[tl]
		if n != b[tl] {
			t.Errorf("%q: %q then %q: not deterministic", tl, n, b[tl])
		}
		if len(n) > maxToolName || safeChars(n) != n || !strings.HasPrefix(n, "srv__") {
			t.Errorf("%q → %q breaks the model API's rules", tl, n)
		}
		if seen[n] {
			t.Errorf("%q → %q collides", tl, n)
		}
		seen[n] = true
	}
	if a["search"] != "srv__search" || a["bash"] != "srv__bash" || a["get_issue"] != "srv__get_issue" {
		t.Errorf("plain names: %v", a)
	}
	// A name the model API refuses is cleaned, and hashed only when the
	// cleaned name is taken (here by get_issue, which keeps its own).
	if a["get.issue"] == "srv__get_issue" || !strings.HasPrefix(a["get.issue"], "srv__get_issue_") {
		t.Errorf("get.issue beside get_issue: %q", a["get.issue"])
	}
	if got := exposedNames("srv", []string{"get.weather", "list files"}); got["get.weather"] != "srv__get_weather" || got["list files"] != "srv__list_files" {
		t.Errorf("cleaned names: %v, want srv__get_weather and srv__list_files", got)
	}
}

func TestInputSchemaRules(t *testing.T) {
	t.Parallel()
	for _, refused := range []string{
		`{"type":"array"}`,
		`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`,
		`{"type":"object","oneOf":[]}`,
		`{"enum":[1,2]}`,
		`{"type":"object","properties":[]}`,
		`{"type":"object","required":"a"}`,
		`{"type":"object","required":[1]}`,
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
	} {
		var v map[string]any
		if err := json.Unmarshal([]byte(refused), &v); err != nil {
			t.Fatal(err)
		}
		if _, err := inputSchema(v); err == nil {
			t.Errorf("%s accepted, which the model API refuses", refused)
		}
	}
	if _, err := inputSchema(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/x"}}}); err != nil {
		t.Errorf("a local $ref refused: %v", err)
	}
	got, err := inputSchema(map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": map[string]any{}})
	if err != nil || strings.Contains(string(got), "$schema") || !strings.Contains(string(got), `"type":"object"`) {
		t.Errorf("sanitised: %s, %v", got, err)
	}
}

// Two servers' tools never share a name: a server's name has no "__" and
// does not end in "_", so <server>__ is a prefix of its tools' names only.
func TestExposedNamesUniqueAcrossServers(t *testing.T) {
	t.Parallel()
	servers := map[string][]string{"x": {"_y", "y", "__z"}, "x-": {"y"}, "_x": {"y"}, "x-y": {"z"}, "x__": {"z"}, "x_": {"y"}}
	seen := map[string]string{}
	for srv, tools := range servers {
		if _, err := Parse([]byte("servers:\n- name: "+srv+"\n  url: http://x\n"), env); err != nil {
			if srv == "x__" || srv == "x_" {
				continue // refused, as it must be
			}
			t.Fatalf("server %q: %v", srv, err)
		}
		for tl, n := range exposedNames(srv, tools) {
			if other, dup := seen[n]; dup {
				t.Errorf("%s's %q and %s share the name %q", srv, tl, other, n)
			}
			seen[n] = srv + "'s " + tl
		}
	}
}

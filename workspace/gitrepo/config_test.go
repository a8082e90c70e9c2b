package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseListAndFile(t *testing.T) {
	list, err := ParseList(" backend=git@github.com:acme/backend.git , web=https://github.com/acme/web ,")
	if err != nil || len(list) != 2 || list[0].Name != "backend" || list[1].URL != "https://github.com/acme/web" {
		t.Fatalf("ParseList = %+v, %v", list, err)
	}
	if _, err := ParseList("backend"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a pair without = : %v", err)
	}
	file, err := ParseFile([]byte(`repos:
  - name: api
    url: /srv/git/api.git
    branch: release-1.2
    setup: make deps
    channels: [C0123ABCD]
    github: acme/api
`))
	if err != nil || len(file) != 1 || file[0].Setup != "make deps" || file[0].Channels[0] != "C0123ABCD" || file[0].Branch != "release-1.2" {
		t.Fatalf("ParseFile = %+v, %v", file, err)
	}
	if _, err := ParseFile([]byte("repos:\n  - name: a\n    urll: x\n")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a misspelt key: %v, want an error", err)
	}
}

func TestCheck(t *testing.T) {
	ok, err := Check([]Repo{
		{Name: "a", URL: "https://github.com/acme/a.git"},
		{Name: "b", URL: "git@github.com:acme/b.git"},
		{Name: "c", URL: "ssh://git@github.com/acme/c"},
		{Name: "d", URL: "https://gitlab.com/acme/d.git"},
		{Name: "e", URL: "/srv/e.git", GitHub: "acme/e", Channels: []string{"C1"}},
		{Name: "f", URL: "../f.git"},
		{Name: "g", URL: "file:///srv/g.git"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"acme/a", "acme/b", "acme/c", "", "acme/e", "", ""} {
		if ok[i].GitHub != want {
			t.Errorf("%s: github %q, want %q", ok[i].Name, ok[i].GitHub, want)
		}
	}
	wd, _ := os.Getwd()
	urls := []string{"https://github.com/acme/a.git", "git@github.com:acme/b.git", "ssh://git@github.com/acme/c",
		"https://gitlab.com/acme/d.git", "/srv/e.git", filepath.Join(filepath.Dir(wd), "f.git"), "file:///srv/g.git"}
	for i, want := range urls {
		if ok[i].URL != want { // a relative path is h9's, not the cache's, where h9's git runs
			t.Errorf("%s: url %q, want %q", ok[i].Name, ok[i].URL, want)
		}
	}
	bad := map[string][]Repo{
		"defined twice":        {{Name: "a", URL: "/x"}, {Name: "A", URL: "/y"}},
		"reserved":             {{Name: "none", URL: "/x"}},
		"url is required":      {{Name: "a"}},
		"not a repository URL": {{Name: "a", URL: "--upload-pack=evil"}},
		"not a valid branch":   {{Name: "a", URL: "/x", Branch: "a..b"}},
		"not owner/name":       {{Name: "a", URL: "/x", GitHub: "acme"}},
		"not a Slack channel":  {{Name: "a", URL: "/x", Channels: []string{"general"}}},
		"the default of both":  {{Name: "a", URL: "/x", Channels: []string{"C123"}}, {Name: "b", URL: "/y", Channels: []string{"C123"}}},
		"the name must be":     {{Name: "../etc", URL: "/x"}},
	}
	for want, repos := range bad {
		if _, err := Check(repos); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://x-access-token:ghp_1@github.com/a/b": "https://x-access-token:REDACTED@github.com/a/b",
		"https://ghp_1@github.com/a/b":                "https://REDACTED@github.com/a/b",
		"ssh://git@github.com/a/b":                    "ssh://git@github.com/a/b",
		"git@github.com:a/b.git":                      "git@github.com:a/b.git",
		"/srv/git/a.git":                              "/srv/git/a.git",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBranchNames(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		b := NewBranch("[WIP] Fix the flaky login test, again! ünïcode 🚀")
		if !strings.HasPrefix(b, "h9/wip-fix-the-flaky-login-test-again") || !ValidBranch(b) {
			t.Fatalf("NewBranch = %q", b)
		}
		if seen[b] {
			t.Fatalf("NewBranch repeated %q", b)
		}
		seen[b] = true
	}
	if b := NewBranch("!!!"); !strings.HasPrefix(b, "h9/task-") || !ValidBranch(b) {
		t.Errorf("NewBranch of no words = %q", b)
	}
	if b := NewBranch(strings.Repeat("word ", 50)); len(b) > 60 {
		t.Errorf("NewBranch of a long task is %d bytes: %q", len(b), b)
	}
	for _, good := range []string{"main", "release-1.2", "feature/x", "h9/a-b"} {
		if !ValidBranch(good) {
			t.Errorf("ValidBranch(%q) = false", good)
		}
	}
	for _, bad := range []string{"", "-x", "a..b", "a b", "a~1", "x.lock", "a//b", "/a", "a/", ".a", "a/.b", "a@{1}", "@", "a:b", "a\x00", "a^"} {
		if ValidBranch(bad) {
			t.Errorf("ValidBranch(%q) = true", bad)
		}
	}
}

// The configuration h9 writes itself reads back through git as written,
// quotes, backslashes and subsections included.
func TestAppendConfigReadsBackThroughGit(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "--quiet", "--bare", ".")
	values := [][2]string{
		{"user.name", `Ada "the first" Lovelace`},
		{"remote.origin.url", `C:\repos\odd path.git`},
		{"h9.base", "release/1.2"},
		{`url.https://x/"y".insteadOf`, "z"},
	}
	if err := appendConfig(dir, values); err != nil {
		t.Fatal(err)
	}
	for _, kv := range values[:3] {
		if got := git(t, dir, "config", "--get", kv[0]); got != kv[1] {
			t.Errorf("%s = %q, want %q", kv[0], got, kv[1])
		}
	}
	if err := appendConfig(dir, [][2]string{{"user.name", "a\nb"}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a value with a newline: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegitea"
)

// h9 doctor checks a Gitea repository's token against the fake Gitea:
// accepted with every right, or the missing right or scope named, never
// the token.
func TestDoctorChecksGitea(t *testing.T) {
	doctorEnv(t)
	bare := bareRepo(t)
	gt := fakegitea.New("gt_doctor_token")
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/good", bare, true)
	gt.AddRepo("acme/ro", bare, false)
	entry := func(name, project string) string {
		return "  - name: " + name + "\n    url: " + bare + "\n    forge: {type: gitea, project: " + project + ", api: \"" + gt.URL() + "\"}\n"
	}
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n"+entry("good", "acme/good")+entry("ro", "acme/ro")), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITEA_TOKEN", "gt_doctor_token")
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with a token that cannot push to acme/ro")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "may open pull requests on acme/good (Gitea, H9_GITEA_TOKEN") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/ro"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "cannot push to acme/ro") {
		t.Errorf("read only: %q", l)
	}

	gt.SetScopes("write:repository", "read:issue", "read:user")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "lacks the scope write:issue") {
		t.Errorf("a token without write:issue: %q", l)
	}
	t.Setenv("H9_GITEA_TOKEN", "gt_wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "401") || !strings.Contains(l, "H9_GITEA_TOKEN") || strings.Contains(l, "gt_wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

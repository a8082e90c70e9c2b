package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegithub"
)

// bareRepo is a bare repository with one commit on main.
func bareRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	work, bare := filepath.Join(root, "w"), filepath.Join(root, "r.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", work, bare},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return bare
}

// h9 doctor reaches each repository (ls-remote) and checks the token's
// access on GitHub: one line each, a ✗ for an unreachable one, never the token.
func TestDoctorChecksRepositories(t *testing.T) {
	doctorEnv(t)
	good := bareRepo(t)
	gh := fakegithub.New("ghp_doctor_token")
	t.Cleanup(gh.Close)
	gh.AddRepo("acme/good", good, true)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: good\n    url: "+good+"\n    github: acme/good\n  - name: gone\n    url: "+filepath.Join(t.TempDir(), "missing.git")+"\n"), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITHUB_TOKEN", "ghp_doctor_token")
	t.Setenv("H9_GITHUB_API_URL", gh.URL())
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with an unreachable repository")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "(1 branch)") || !strings.Contains(l, "may open pull requests on acme/good") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/gone"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "not reachable") {
		t.Errorf("gone: %q", l)
	}
	if l := lines["repositories"]; !strings.HasPrefix(l, "✗") {
		t.Errorf("repositories: %q", l)
	}

	t.Setenv("H9_GITHUB_TOKEN", "ghp_wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "401 Bad credentials") || strings.Contains(l, "ghp_wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

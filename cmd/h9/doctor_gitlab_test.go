package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegitlab"
)

// h9 doctor checks a GitLab repository through the fake GitLab: it is
// reachable over HTTP with the token (as oauth2), the token is accepted,
// the project exists and the token's user is a Developer; a Reporter, an
// unknown project and a refused token (git says so first) each get a ✗
// saying which.
func TestDoctorChecksGitLab(t *testing.T) {
	doctorEnv(t)
	gl := fakegitlab.New("glpat-doctor-token")
	t.Cleanup(gl.Close)
	for _, p := range []struct {
		path   string
		access int
	}{{"acme/team/good", fakegitlab.Developer}, {"acme/team/ro", fakegitlab.Reporter}} {
		bare := bareRepo(t)
		if out, err := exec.Command("git", "--git-dir="+bare, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		gl.AddProject(p.path, bare, p.access)
	}
	file := filepath.Join(t.TempDir(), "repos.yml")
	repo := func(name, project, cloned string) string {
		return "  - name: " + name + "\n    url: " + gl.GitURL(cloned) + "\n    forge: {type: gitlab, project: " + project + "}\n"
	}
	os.WriteFile(file, []byte("repos:\n"+repo("good", "acme/team/good", "acme/team/good")+repo("ro", "acme/team/ro", "acme/team/ro")+
		repo("lost", "acme/team/lost", "acme/team/good")), 0o600)
	t.Setenv("H9_REPOS_FILE", file)
	t.Setenv("H9_GITLAB_TOKEN", "glpat-doctor-token")
	t.Setenv("H9_GITLAB_API_URL", gl.URL())
	lines, err := doctorLines(t)
	if err == nil {
		t.Error("doctor passed with a Reporter's repository")
	}
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✓") || !strings.Contains(l, "may open merge requests on acme/team/good (GitLab, H9_GITLAB_TOKEN") {
		t.Errorf("good: %q", l)
	}
	if l := lines["repositories/ro"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "Reporter access to acme/team/ro: it needs Developer or above") {
		t.Errorf("ro: %q", l)
	}
	if l := lines["repositories/lost"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "404 Project Not Found") {
		t.Errorf("lost: %q", l)
	}
	if len(gl.GitUsers()) == 0 {
		t.Error("git never authenticated to the fake GitLab: the test proves nothing")
	}
	for _, u := range gl.GitUsers() {
		if u != "oauth2" {
			t.Errorf("git reached GitLab as %q, want oauth2", u)
		}
	}

	t.Setenv("H9_GITLAB_TOKEN", "glpat-wrong")
	lines, _ = doctorLines(t)
	if l := lines["repositories/good"]; !strings.HasPrefix(l, "✗") || !strings.Contains(l, "Authentication failed") || strings.Contains(l, "glpat-wrong") {
		t.Errorf("a bad token: %q", l)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegitlab"
)

const binGitLabToken = "glpat-binenv-gitlab-7c1f-secret"

// A GitLab repository through the real binary: cloned and pushed over
// HTTP from the fake GitLab as oauth2 with H9_GITLAB_TOKEN, Open merge
// request opens one merge request in a subgroup's project through
// H9_GITLAB_API_URL. The token is never in the sandbox (the model ran env
// there), the logs, Slack, or on disk.
func TestBinaryGitLabMergeRequest(t *testing.T) {
	remote := bareRepo(t)
	if out, err := exec.Command("git", "--git-dir="+remote, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gl := fakegitlab.New(binGitLabToken)
	t.Cleanup(gl.Close)
	gl.AddProject("acme/team/backend", remote, fakegitlab.Developer)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+gl.GitURL("acme/team/backend")+"\n    forge: {type: gitlab, project: acme/team/backend}\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=auto", "H9_REPOS_FILE="+file, "H9_GITLAB_TOKEN="+binGitLabToken, "H9_GITLAB_API_URL="+gl.URL())
	e.start()
	thread, outcome := e.helloRun("echo hello > hello.txt && env")
	if !strings.Contains(string(outcome.Blocks), "Open merge request") {
		t.Errorf("outcome: %s", outcome.Blocks)
	}
	e.openRequest(thread, outcome)
	mrs := gl.MergeRequests("acme/team/backend")
	if len(mrs) != 1 || mrs[0].Title != "say hello in a file" || !strings.HasPrefix(mrs[0].Source, "h9/") {
		t.Errorf("merge requests = %+v", mrs)
	}
	if len(gl.GitUsers()) == 0 {
		t.Error("git never authenticated to the fake GitLab: the test proves nothing")
	}
	for _, u := range gl.GitUsers() {
		if u != "oauth2" {
			t.Errorf("git reached GitLab as %q, want oauth2", u)
		}
	}
	e.stop()
	e.checkSecretsKept(binGitLabToken)
}

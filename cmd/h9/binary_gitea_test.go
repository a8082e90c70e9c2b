package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/forge/fakegitea"
)

const binGiteaToken = "gt_binenv_gitea_71c2-secret"

// A repository on Gitea through the real binary: forge: {type: gitea, …}
// in H9_REPOS_FILE and H9_GITEA_TOKEN; h9 clones and pushes over the fake
// Gitea's git HTTP with the token (credential helper, x-access-token) and
// Open pull request opens it there. The token is never in the sandbox
// (setup and the model ran env there), the logs, Slack, or on disk.
func TestBinaryGiteaRepositorySession(t *testing.T) {
	remote := bareRepo(t)
	gt := fakegitea.New(binGiteaToken)
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/backend", remote, true)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+gt.GitURL("acme/backend")+"\n    forge: {type: gitea, project: acme/backend, api: \""+gt.URL()+"\"}\n    setup: env > .setup-env\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=auto", "H9_REPOS_FILE="+file, "H9_GITEA_TOKEN="+binGiteaToken)
	e.start()
	thread, outcome := e.helloRun("echo hello > hello.txt && env && cat .setup-env && rm .setup-env")
	if !strings.Contains(string(outcome.Blocks), "Open pull request") {
		t.Errorf("outcome: %s", outcome.Blocks)
	}
	e.openRequest(thread, outcome)
	pulls := gt.Pulls("acme/backend")
	if len(pulls) != 1 || pulls[0].Title != "say hello in a file" || !strings.HasPrefix(pulls[0].Head, "h9/") {
		t.Fatalf("pull requests on Gitea = %+v", pulls)
	}
	if got := gitInBare(t, remote, "log", "-1", "--format=%s", pulls[0].Head); got == "" {
		t.Error("the branch was not pushed to the fake Gitea")
	}
	if users := gt.GitUsers(); len(users) == 0 || slices.IndexFunc(users, func(u string) bool { return u != "x-access-token" }) >= 0 {
		t.Errorf("git authenticated as %v, want x-access-token with H9_GITEA_TOKEN", users)
	}
	e.stop()
	e.checkSecretsKept(binGiteaToken, "H9_GITEA_TOKEN=")
}

func gitInBare(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

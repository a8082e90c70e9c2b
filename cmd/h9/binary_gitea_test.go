package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
)

const binGiteaToken = "gt_binenv_gitea_71c2-secret"

// A repository on Gitea through the real binary: forge: {type: gitea, …}
// in H9_REPOS_FILE and H9_GITEA_TOKEN; h9 clones and pushes over the fake
// Gitea's git HTTP with the token (credential helper, x-access-token) and
// Open pull request opens it there. The token is never in the sandbox
// (setup and the model ran env there), the logs or Slack.
func TestBinaryGiteaRepositorySession(t *testing.T) {
	remote := bareRepo(t)
	gt := fakegitea.New(binGiteaToken)
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/backend", remote, true)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+gt.GitURL("acme/backend")+"\n    forge: {type: gitea, project: acme/backend, api: \""+gt.URL()+"\"}\n    setup: env > .setup-env\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=auto", "H9_REPOS_FILE="+file, "H9_GITEA_TOKEN="+binGiteaToken)
	e.start()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"echo hello > hello.txt && env && cat .setup-env && rm .setup-env"}`),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Said hello."),
	)
	thread := e.slash("run [repo=backend] say hello in a file")
	outcome := e.waitMsg(thread, "h9_push_branch", 1)
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", outcome.TS, "h9_open_pr"); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "Opened the pull request", 1)
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

	var seen strings.Builder
	for _, r := range e.model.Requests() {
		data, _ := json.Marshal(r.Messages)
		seen.Write(data)
	}
	if !strings.Contains(seen.String(), "HOME=") {
		t.Fatal("the model never saw the sandbox's environment: the test proves nothing")
	}
	if strings.Contains(seen.String(), binGiteaToken) || strings.Contains(seen.String(), "H9_GITEA_TOKEN") {
		t.Error("the Gitea token reached the sandbox (the model read it)")
	}
	for _, r := range e.slack.Received() {
		if strings.Contains(r, binGiteaToken) {
			t.Error("the Gitea token went to Slack")
		}
	}
	if strings.Contains(e.logs.String(), binGiteaToken) {
		t.Error("the Gitea token is in the logs")
	}
	filepath.Walk(e.dataDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), binGiteaToken) {
				t.Errorf("the Gitea token is written in %s", p)
			}
		}
		return nil
	})
}

func gitInBare(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

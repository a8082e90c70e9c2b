package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
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
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"echo hello > hello.txt && env"}`),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Said hello."),
	)
	thread := e.slash("run [repo=backend] say hello in a file")
	outcome := e.waitMsg(thread, "h9_push_branch", 1)
	if !strings.Contains(string(outcome.Blocks), "Open merge request") {
		t.Errorf("outcome: %s", outcome.Blocks)
	}
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", outcome.TS, "h9_open_pr"); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "Opened the", 1)
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

	var seen strings.Builder
	for _, r := range e.model.Requests() {
		data, _ := json.Marshal(r.Messages)
		seen.Write(data)
	}
	if !strings.Contains(seen.String(), "HOME=") {
		t.Fatal("the model never saw the sandbox's environment: the test proves nothing")
	}
	if strings.Contains(seen.String(), binGitLabToken) {
		t.Error("the GitLab token reached the sandbox (the model read it)")
	}
	for _, r := range e.slack.Received() {
		if strings.Contains(r, binGitLabToken) {
			t.Error("the GitLab token went to Slack")
		}
	}
	if strings.Contains(e.logs.String(), binGitLabToken) {
		t.Error("the GitLab token is in the logs")
	}
	filepath.Walk(e.dataDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), binGitLabToken) {
				t.Errorf("the token is written in %s", p)
			}
		}
		return nil
	})
}

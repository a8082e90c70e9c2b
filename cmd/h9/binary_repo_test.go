package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/h9test"
)

const binGitHubToken = "ghp_binenv_github_9d4e-secret"

// A new user's path with a repository, through the real binary and the
// sandbox h9 picks by default: H9_REPOS_FILE with a setup command, a task
// on the repository, its outcome, Open pull request. The token is never in
// the sandbox (the model ran env there), the logs, Slack, or on disk.
func TestBinaryRepositorySession(t *testing.T) {
	remote := bareRepo(t)
	gh := h9test.GitHub(t, binGitHubToken, "acme/backend", remote)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+remote+"\n    github: acme/backend\n    setup: env > .setup-env\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=auto", "H9_REPOS_FILE="+file, "H9_GITHUB_TOKEN="+binGitHubToken, "H9_GITHUB_API_URL="+gh.URL())
	e.start()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"echo hello > hello.txt && env && cat .setup-env && rm .setup-env"}`),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Said hello."),
	)
	thread := e.slash("run [repo=backend] say hello in a file")
	outcome := e.waitMsg(thread, "h9_push_branch", 1)
	if !strings.Contains(string(outcome.Blocks), "hello.txt") {
		t.Errorf("outcome: %s", outcome.Blocks)
	}
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", outcome.TS, "h9_open_pr"); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "Opened the pull request", 1)
	if pulls := gh.Pulls("acme/backend"); len(pulls) != 1 || pulls[0].Title != "say hello in a file" {
		t.Errorf("pull requests = %+v", pulls)
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
	for _, secret := range []string{binGitHubToken, binBotToken, binAppToken, binAPIKey} {
		if strings.Contains(seen.String(), secret) {
			t.Errorf("a secret reached the sandbox (the model read it): %s", secret)
		}
		for _, r := range e.slack.Received() {
			if strings.Contains(r, secret) {
				t.Errorf("a secret went to Slack: %s", secret)
			}
		}
	}
	if strings.Contains(e.logs.String(), binGitHubToken) {
		t.Error("the GitHub token is in the logs")
	}
	filepath.Walk(e.dataDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), binGitHubToken) {
				t.Errorf("the token is written in %s", p)
			}
		}
		return nil
	})
}

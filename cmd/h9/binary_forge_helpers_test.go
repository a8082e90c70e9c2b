package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// helloRun is a repository session's first task through the binary: the
// model marks a todo, runs command in the sandbox, finishes it and says
// so; it returns the outcome message with Push branch.
func (e *binEnv) helloRun(command string) (thread string, outcome fakeslack.Message) {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", string(args)),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Said hello."),
	)
	thread = e.slash("run [repo=backend] say hello in a file")
	return thread, e.waitMsg(thread, "h9_push_branch", 1)
}

// openRequest presses Open pull request (or merge request) on outcome and
// waits for h9's word that it opened one.
func (e *binEnv) openRequest(thread string, outcome fakeslack.Message) {
	e.t.Helper()
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", outcome.TS, "h9_open_pr"); err != nil {
		e.t.Fatal(err)
	}
	e.waitMsg(thread, "Opened the", 1)
}

// checkSecretsKept runs once the binary has stopped: the model saw the
// sandbox's environment (it ran env), and none of secrets is in what the
// model read, what went to Slack, the logs or any file in h9's data
// directory.
func (e *binEnv) checkSecretsKept(secrets ...string) {
	e.t.Helper()
	var seen strings.Builder
	for _, r := range e.model.Requests() {
		data, _ := json.Marshal(r.Messages)
		seen.Write(data)
	}
	if !strings.Contains(seen.String(), "HOME=") {
		e.t.Fatal("the model never saw the sandbox's environment: the test proves nothing")
	}
	for _, secret := range secrets {
		if strings.Contains(seen.String(), secret) {
			e.t.Errorf("a secret reached the sandbox (the model read it): %s", secret)
		}
		for _, r := range e.slack.Received() {
			if strings.Contains(r, secret) {
				e.t.Errorf("a secret went to Slack: %s", secret)
			}
		}
		if strings.Contains(e.logs.String(), secret) {
			e.t.Errorf("a secret is in the logs: %s", secret)
		}
	}
	filepath.Walk(e.dataDir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, secret := range secrets {
			if strings.Contains(string(data), secret) {
				e.t.Errorf("a secret is written in %s: %s", p, secret)
			}
		}
		return nil
	})
}

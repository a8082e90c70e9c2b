package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// A whole flow on the real binary, unsandboxed, where the model makes bash
// print the environment and every /proc/*/environ, and where the model
// endpoint fails until Retry: no token or key appears in anything Slack
// received, anything the model was sent, or the log; every JSON log line
// about a session names its channel and thread.
func TestBinarySecretsNeverLeak(t *testing.T) {
	e := newBinEnv(t, "H9_LOG_FORMAT=json", "H9_MODEL_RETRIES=2")
	e.start()

	e.model.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"env"}`),
		fakemodel.ToolCall("bash", `{"command":"for f in /proc/$PPID/environ /proc/*/environ; do tr '\\000' '\\n' < $f; done 2>/dev/null | sort -u"}`),
		fakemodel.Text("Checked the environment."),
	)
	leak := e.slash("run look for tokens")
	e.waitMsg(leak, "Checked the environment.", 1)

	// Model down: bounded retries, then a clear message with Retry; Retry works.
	e.model.Enqueue(fakemodel.ServerError(), fakemodel.ServerError())
	down := e.slash("run while the model is down")
	failure := e.waitMsg(down, render.ActionRetry, 1)
	e.waitChecklist(down, "error")
	e.model.Enqueue(fakemodel.Text("Back up."))
	e.click(failure.TS, render.ActionRetry)
	e.waitMsg(down, "Back up.", 1)
	e.stop()

	checkNoSecrets(t, e)
	checkSessionLogLines(t, e.logs.String())
}

// checkNoSecrets: no token or key in anything Slack received, anything the
// model was sent, or the log.
func checkNoSecrets(t *testing.T, e *binEnv) {
	reqs, _ := json.Marshal(e.model.Requests())
	if !strings.Contains(string(reqs), "H9_DATA_DIR=") && !strings.Contains(string(reqs), "PATH=") {
		t.Fatal("bash never printed an environment: the scan below would prove nothing")
	}
	logs := e.logs.String()
	for _, secret := range []string{binBotToken, binAppToken, binAPIKey} {
		for _, r := range e.slack.Received() {
			if strings.Contains(r, secret) {
				t.Errorf("Slack received %s: %.200q", secret, r)
			}
		}
		if strings.Contains(string(reqs), secret) {
			t.Errorf("the model was sent %s", secret)
		}
		if strings.Contains(logs, secret) {
			t.Errorf("the log carries %s", secret)
		}
	}
}

// checkSessionLogLines: every JSON log line about a session names its
// channel and thread, the agent's lines too.
func checkSessionLogLines(t *testing.T, logs string) {
	sessionLines, agentLines := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		if m["session"] == nil {
			continue
		}
		sessionLines++
		if m["component"] == "agent" {
			agentLines++
		}
		if m["channel"] != "C1" || m["thread"] == nil || !strings.HasSuffix(m["session"].(string), "/"+m["thread"].(string)) {
			t.Errorf("session log line without its channel and thread: %s", line)
		}
	}
	if sessionLines == 0 || agentLines == 0 {
		t.Errorf("%d session lines, %d from the agent: want both", sessionLines, agentLines)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp/mcptest"
)

const binMCPToken = "mcp-team-token-0123456789"

// The real binary with H9_MCP_FILE: the model calls team__echo, the ✔
// line names it, and the header token is in no model request, Slack
// message, log line, sandboxed command's environment or h9's own
// environment image.
func TestBinaryMCPToolEndToEnd(t *testing.T) {
	srv := mcptest.NewRemote(binMCPToken)
	t.Cleanup(srv.Close) // after h9 is killed (cleanups run in reverse)
	file := filepath.Join(t.TempDir(), "mcp.yml")
	yaml := "servers:\n  - name: team\n    url: " + srv.URL + "\n    headers_env:\n      Authorization: TEAM_MCP_TOKEN\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newBinEnv(t, "H9_MCP_FILE="+file, "TEAM_MCP_TOKEN=Bearer "+binMCPToken)
	e.start()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress")),
		fakemodel.ToolCall("team__echo", `{"text":"PROJ-7"}`),
		fakemodel.ToolCall("bash", `{"command":"env; cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n'"}`),
		fakemodel.ToolCall("todo_write", todoArgs("a:completed")),
		fakemodel.Text("Looked it up."),
	)
	thread := e.slash("run look up PROJ-7")
	e.waitMsg(thread, "Looked it up.", 1)
	e.waitChecklist(thread, "✔ task a — ", "team__echo PROJ-7", "1/1 tasks")

	var sawEcho bool
	for i, body := range e.model.Bodies() {
		if bytes.Contains(body, []byte(binMCPToken)) {
			t.Errorf("model request %d carries the MCP token", i)
		}
		sawEcho = sawEcho || bytes.Contains(body, []byte("echo: PROJ-7"))
	}
	if !sawEcho {
		t.Error("the MCP result never reached the model")
	}
	for _, m := range e.slack.Messages("C1") {
		if strings.Contains(m.Text, binMCPToken) || strings.Contains(string(m.Blocks), binMCPToken) {
			t.Errorf("a Slack message carries the MCP token: %q", m.Text)
		}
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(e.cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte(binMCPToken)) || bytes.Contains(environ, []byte("TEAM_MCP_TOKEN")) {
		t.Error("h9's environment image carries the MCP token")
	}
	if strings.Contains(e.logs.String(), binMCPToken) {
		t.Error("h9's logs carry the MCP token")
	}
	if srv.Requests.Load() == 0 {
		t.Error("the server never saw h9's token")
	}
}

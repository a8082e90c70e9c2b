package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

func todoWrite(id string, st planning.TodoStatus) fakemodel.Reply {
	data, _ := json.Marshal(map[string]any{"todos": []planning.TodoItem{{ID: id, Content: "look it up", Status: st}}})
	return call("todo_write", string(data))
}

// A successful MCP call is work: it completes a todo and is its evidence,
// named <server>__<tool> with its arguments; a call the server failed is
// not work, and the completion after it is refused.
func TestMCPCallCountsAsWork(t *testing.T) {
	t.Parallel()
	srv := newRemote(t)
	h := newHarness(t, "none", remoteServer(t, srv.URL), 0)
	h.mgr.Start()
	h.model.Enqueue(
		todoWrite("a", planning.TodoInProgress), call("team__fail", `{}`), todoWrite("a", planning.TodoCompleted),
		call("team__echo", `{"text":"PROJ-12"}`), todoWrite("a", planning.TodoCompleted), fakemodel.Text("done"))
	res, err := h.eng.Run(context.Background(), "s1", agent.Request{Intent: agent.IntentTask, Text: "look up PROJ-12"}, agent.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := h.toolResults()
	if len(got) != 5 || !strings.Contains(got[2], "Error:") || !strings.Contains(got[2], `todo "a"`) {
		t.Fatalf("completing after a failed MCP call was not refused: %q", got)
	}
	calls := res.Evidence["a"].Calls
	if len(calls) != 1 || calls[0].Tool != "team__echo" || calls[0].Target != "PROJ-12" || calls[0].Failed {
		t.Errorf("the evidence of the completed todo: %+v", res.Evidence["a"])
	}
}

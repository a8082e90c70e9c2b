package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// A Checkpointer is asked once per newly completed todo, with the open
// workspace, in execution modes only; its checkpoint joins the todo's
// evidence before the snapshot, and a failure leaves the todo completed.
func TestCheckpointJoinsTheEvidence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var asked []string
	hook := func(_ context.Context, ws *workspace.Workspace, todo planning.TodoItem) (*planning.Checkpoint, error) {
		asked = append(asked, todo.ID)
		if todo.ID == "b" {
			return nil, errors.New("git is down")
		}
		data, err := os.ReadFile(filepath.Join(ws.Dir(), "hello.txt"))
		if err != nil {
			return nil, err
		}
		return &planning.Checkpoint{Commit: "c0ffee1", Added: strings.Count(string(data), "\n")}, nil
	}
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(inProgress("a"), pending("b"))),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"one\ntwo\n"}`),
		fakemodel.ToolCall("todo_write", todoArgs(completed("a"), inProgress("b"))),
		fakemodel.ToolCall("bash", `{"command":"true"}`),
		fakemodel.ToolCall("todo_write", todoArgs(completed("a"), completed("b"))),
		fakemodel.Text("done"),
	)
	res, rec, err := h.run("s", "write", RunOptions{Checkpoint: hook})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "a,b" {
		t.Errorf("checkpoints asked for %v, want a then b (once each)", asked)
	}
	want := planning.Checkpoint{Commit: "c0ffee1", Added: 2}
	snaps := rec.of(EventTodos)
	for what, ev := range map[string]map[string]planning.Evidence{"snapshot": snaps[1].Evidence, "result": res.Evidence} {
		if cp := ev["a"].Checkpoint; cp == nil || *cp != want {
			t.Errorf("%s: a's checkpoint = %+v, want %+v", what, cp, want)
		}
		if ev["b"].Checkpoint != nil {
			t.Errorf("%s: b has a checkpoint from a failed hook", what)
		}
	}
	if len(res.Todos) != 2 || res.Todos[1].Status != planning.TodoCompleted {
		t.Errorf("a failed checkpoint undid the completion: %v", res.Todos)
	}

	h.setMode("p", planning.PlanModePlan)
	asked = nil
	h.srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"ls"}`), fakemodel.ToolCall("todo_write", todoArgs(completed("x"))), fakemodel.Text("plan"))
	if _, _, err := h.run("p", "plan", RunOptions{Checkpoint: hook}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 {
		t.Errorf("plan mode asked for checkpoints: %v", asked)
	}
}

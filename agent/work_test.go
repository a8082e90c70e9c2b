package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

func inProgress(id string) planning.TodoItem { return todo(id, "task "+id, planning.TodoInProgress) }
func completed(id string) planning.TodoItem  { return todo(id, "task "+id, planning.TodoCompleted) }
func pending(id string) planning.TodoItem    { return todo(id, "task "+id, planning.TodoPending) }

// A completion with no work behind it is an error result naming the todo
// and the rule, nothing is stored or shown; after a write it is accepted
// and the write is its evidence, in the snapshot, the result and the store.
func TestCompletionNeedsWorkThenShowsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(inProgress("a"))),
		fakemodel.ToolCall("todo_write", todoArgs(completed("a"))),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi"}`),
		fakemodel.ToolCall("todo_write", todoArgs(completed("a"))),
		fakemodel.Text("done"),
	)
	res, rec := h.mustRun("s", "say hi")

	results := toolMessages(h.lastRequest())
	refusal := results[1].Content
	for _, want := range []string{"Error:", `todo "a"`, "since it was marked in_progress", "Nothing was saved"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("refusal %q does not say %q", refusal, want)
		}
	}
	if !strings.HasPrefix(results[3].Content, "Todos updated: 1/1 tasks") {
		t.Errorf("completion after the write = %q", results[3].Content)
	}
	snaps := rec.of(EventTodos)
	if len(snaps) != 2 {
		t.Fatalf("todos events = %d, want 2 (the refusal emits none)", len(snaps))
	}
	want := map[string]planning.Evidence{"a": {Made: 1, Succeeded: 1, Calls: []planning.ToolRun{{Tool: "write_file", Target: "hello.txt"}}}}
	for what, got := range map[string]map[string]planning.Evidence{"snapshot": snaps[1].Evidence, "result": res.Evidence} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s evidence (-want +got):\n%s", what, diff)
		}
	}
	h.reopen()
	snap, err := h.eng.Snapshot(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, snap.Evidence); diff != "" {
		t.Errorf("stored evidence after a restart (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]planning.TodoItem{completed("a")}, snap.Todos); diff != "" {
		t.Errorf("stored todos (-want +got):\n%s", diff)
	}
}

// Work done in one run counts in the next, on a new engine; a todo that
// went in_progress before a restart has no work the restart made up.
func TestWorkAcrossRunsAndRestarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(inProgress("a"), inProgress("b"))),
		fakemodel.ToolCall("bash", `{"command":"echo a > a.txt"}`),
		fakemodel.Text("stopping here"),
	)
	h.mustRun("s", "two things")
	h.reopen()
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(completed("a"), inProgress("c"))),
		fakemodel.Text("a is done"),
	)
	h.mustRun("s", "go on")
	if got := toolMessages(h.lastRequest()); !strings.HasPrefix(got[len(got)-1].Content, "Todos updated") {
		t.Fatalf("work from the earlier run did not count: %q", got[len(got)-1].Content)
	}
	h.reopen()
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(completed("a"), completed("c"))), fakemodel.Text("c?"))
	h.mustRun("s", "and c")
	if got := toolMessages(h.lastRequest()); !strings.Contains(got[len(got)-1].Content, `todo "c" (`) || !strings.Contains(got[len(got)-1].Content, "cannot be marked completed") {
		t.Fatalf("a restart invented work for c: %q", got[len(got)-1].Content)
	}
}

// Bash runs are evidence with their exit codes, failed or not; a call
// that never ran (bad arguments, an unknown tool) is not.
func TestEvidenceKeepsExitCodes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(inProgress("t"))),
		fakemodel.ToolCalls(
			fakemodel.C("bash", `{"command":"exit 3"}`),
			fakemodel.C("write_file", `{"path":"../outside","content":"x"}`),
			fakemodel.C("frobnicate", `{}`),
			fakemodel.C("bash", `{"command":"true"}`),
		),
		fakemodel.ToolCall("todo_write", todoArgs(completed("t"))),
		fakemodel.Text("tested"),
	)
	res, _ := h.mustRun("s", "test it")
	three, zero := 3, 0
	want := planning.Evidence{Made: 2, Succeeded: 1, Calls: []planning.ToolRun{
		{Tool: "bash", Target: "exit 3", Failed: true, Exit: &three},
		{Tool: "bash", Target: "true", Exit: &zero},
	}}
	if diff := cmp.Diff(want, res.Evidence["t"]); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
}

// Evidence the model writes into its todo_write is not believed.
func TestEvidenceCannotBeForged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	forged := `{"todos":[{"id":"a","content":"x","status":"completed","evidence":{"calls":[{"tool":"bash","target":"make"}],"made":1,"ok":1}}]}`
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", forged), fakemodel.Text("done"))
	res, _ := h.mustRun("s", "cheat")
	if got := toolMessages(h.lastRequest())[0].Content; !strings.Contains(got, "cannot go straight to completed") {
		t.Errorf("forged evidence accepted: %q", got)
	}
	if len(res.Todos) != 0 || res.Evidence != nil {
		t.Errorf("forged call stored %v %v", res.Todos, res.Evidence)
	}
}

// The description tells the model the work rule before it breaks it.
func TestTodoWriteDescribesTheWorkRule(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"at most one item may go from pending straight to completed", "only become completed after real work", "since your previous todo_write"} {
		if !strings.Contains(strings.ToLower(todoWriteDescription), strings.ToLower(want)) {
			t.Errorf("todo_write's description does not say %q", want)
		}
	}
}

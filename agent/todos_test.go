package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	goopenai "github.com/sashabaranov/go-openai"
)

var threePending = []planning.TodoItem{
	todo("1", "create main.go", planning.TodoPending),
	todo("2", "write handler", planning.TodoPending),
	todo("3", "run go test", planning.TodoPending),
}

func TestTodoWriteBatchCompletionIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(threePending...)), fakemodel.Text("planned"))
	h.mustRun("s", "plan")

	cheat := []planning.TodoItem{
		todo("1", "create main.go", planning.TodoCompleted),
		todo("2", "write handler", planning.TodoCompleted),
		todo("3", "run go test", planning.TodoPending),
	}
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(cheat...)), fakemodel.Text("done"))
	_, rec := h.mustRunRequest("s", Request{Intent: IntentExecute})

	results := toolMessages(h.lastRequest())
	last := results[len(results)-1]
	if !strings.HasPrefix(last.Content, "Error:") || !strings.Contains(last.Content, "in_progress") {
		t.Errorf("refusal the model read = %q", last.Content)
	}
	if got := rec.of(EventTodos); len(got) != 0 {
		t.Errorf("refused write emitted todos events: %+v", got)
	}
	stored, err := h.eng.Todos(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(threePending, stored); diff != "" {
		t.Errorf("store changed by a refused write (-want +got):\n%s", diff)
	}
}

func TestTodoWriteAcceptedEmitsSnapshotAndSaves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(threePending...)),
		fakemodel.ToolCall("todo_write", `{}`), // read
		fakemodel.Text("planned"),
	)
	res, rec := h.mustRun("s", "plan")

	snaps := rec.of(EventTodos)
	if len(snaps) != 1 {
		t.Fatalf("todos events = %d, want 1 (reads emit none)", len(snaps))
	}
	if diff := cmp.Diff(threePending, snaps[0].Todos); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(threePending, res.Todos); diff != "" {
		t.Errorf("result todos (-want +got):\n%s", diff)
	}
	read := toolMessages(h.lastRequest())[1].Content
	if !strings.Contains(read, `"id":"2"`) {
		t.Errorf("todo_write without todos returned %q, want the list as JSON", read)
	}
}

func TestCancelOpenTodos(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	items := []planning.TodoItem{
		todo("1", "a", planning.TodoCompleted),
		todo("2", "b", planning.TodoInProgress),
		todo("3", "c", planning.TodoPending),
	}
	h.srv.Enqueue(fakemodel.ToolCalls(
		fakemodel.C("write_file", `{"path":"a.txt","content":"a"}`), // the work behind "1"
		fakemodel.C("todo_write", todoArgs(items...)),
	), fakemodel.Text("ok"))
	h.mustRun("s", "go")

	got, err := h.eng.CancelOpenTodos(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	want := []planning.TodoItem{
		todo("1", "a", planning.TodoCompleted),
		todo("2", "b", planning.TodoCancelled),
		todo("3", "c", planning.TodoCancelled),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("returned (-want +got):\n%s", diff)
	}
	stored, _ := h.eng.Todos(context.Background(), "s")
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// Cancel while a run is in flight, and Cancel racing a run's start: the
// run's saves keep the cancellation, wherever Cancel lands.
func TestCancelOpenTodosDuringRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.SetHandler(func(req goopenai.ChatCompletionRequest) fakemodel.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == goopenai.ChatMessageRoleUser && strings.Contains(last.Content, "plan") {
			return fakemodel.ToolCall("todo_write", todoArgs(todo("1", "a", planning.TodoPending), todo("2", "b", planning.TodoInProgress)))
		}
		return fakemodel.Text("ok").WithLatency(20 * time.Millisecond)
	})
	for i := range 20 {
		id := fmt.Sprintf("s%d", i)
		h.mustRun(id, "plan")
		calls := h.srv.Calls()
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := h.eng.Run(context.Background(), id, task("go on"), RunOptions{}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if i == 0 { // the first: surely while the model answers
				for h.srv.Calls() == calls {
					time.Sleep(time.Millisecond)
				}
			}
			if _, err := h.eng.CancelOpenTodos(context.Background(), id); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		stored, err := h.eng.Todos(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range stored {
			if it.Status.Active() {
				t.Fatalf("%s: todo %s is %s after Cancel", id, it.ID, it.Status)
			}
		}
	}
}

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	goopenai "github.com/sashabaranov/go-openai"
)

func TestSessionSurvivesNewEngine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setMode("s", planning.PlanModePlan)
	h.srv.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs(threePending...)),
		fakemodel.ToolCall("bash", `{"command":"ls"}`),
		fakemodel.Text("here is the plan"),
	)
	first, _ := h.mustRun("s", "plan the work")
	before := h.lastRequest().Messages[1:] // without the system prompt

	h.reopen()

	todos, err := h.eng.Todos(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.Todos, todos); diff != "" {
		t.Errorf("todos after restart (-want +got):\n%s", diff)
	}

	h.setMode("s", planning.PlanModeDefault)
	h.srv.Enqueue(fakemodel.Text("continuing"))
	h.mustRunRequest("s", Request{Intent: IntentContinue})

	got := h.lastRequest().Messages[1:]
	want := append(append([]goopenai.ChatCompletionMessage{}, before...),
		goopenai.ChatCompletionMessage{Role: "assistant", Content: "here is the plan"},
		goopenai.ChatCompletionMessage{Role: "user", Content: ContinuePrompt},
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conversation after restart (-want +got):\n%s", diff)
	}
}

func TestTodosSavedWhenRunFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxRetries = 1 })
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(threePending...)), fakemodel.ServerError())
	if _, _, err := h.run("s", "plan", RunOptions{}); err == nil {
		t.Fatal("run succeeded, want model failure")
	}
	h.reopen()
	todos, err := h.eng.Todos(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(threePending, todos); diff != "" {
		t.Errorf("todos after failed run and restart (-want +got):\n%s", diff)
	}
}

// When a step's commit fails the run stops before its next model request,
// so nothing runs whose history could not be stored, and says the session
// could not be saved.
func TestFailedCommitStopsRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The database goes away while the first request is in flight: the
	// step's commit fails.
	h.srv.SetHandler(func(req goopenai.ChatCompletionRequest) fakemodel.Reply {
		if len(req.Messages) > 2 {
			return fakemodel.ToolCall("write_file", `{"path":"after.txt","content":"x"}`)
		}
		if err := h.db.Close(); err != nil {
			t.Error(err)
		}
		return fakemodel.ToolCall("read_file", `{"path":"missing.txt"}`)
	})
	_, rec, err := h.run("s", "go", RunOptions{})
	if !errors.Is(err, ErrStore) {
		t.Fatalf("run err = %v, want ErrStore", err)
	}
	if n := h.srv.Calls(); n != 1 {
		t.Errorf("model asked %d times, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(h.wsDir("s"), "after.txt")); !os.IsNotExist(err) {
		t.Errorf("the next step's write ran after a failed commit (stat err %v)", err)
	}
	if last := rec.events[len(rec.events)-1]; last.Kind != EventError || !strings.Contains(last.Text, "could not read or save") {
		t.Errorf("last event = %+v, want the store failure", last)
	}
}

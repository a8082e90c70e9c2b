package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	openai "github.com/sashabaranov/go-openai"
)

func TestSessionSurvivesNewEngine(t *testing.T) {
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

	mode, err := h.eng.PlanMode("s")
	if err != nil || mode != planning.PlanModePlan {
		t.Fatalf("mode after restart = %v, %v; want plan", mode, err)
	}
	todos, err := h.eng.Todos("s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.Todos, todos); diff != "" {
		t.Errorf("todos after restart (-want +got):\n%s", diff)
	}

	h.setMode("s", planning.PlanModeDefault)
	h.srv.Enqueue(fakemodel.Text("continuing"))
	h.mustRun("s", ContinuePrompt)

	got := h.lastRequest().Messages[1:]
	want := append(append([]openai.ChatCompletionMessage{}, before...),
		openai.ChatCompletionMessage{Role: "assistant", Content: "here is the plan"},
		openai.ChatCompletionMessage{Role: "user", Content: ContinuePrompt},
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conversation after restart (-want +got):\n%s", diff)
	}
}

func TestTodosSavedWhenRunFails(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxRetries = 1 })
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(threePending...)), fakemodel.ServerError())
	if _, _, err := h.run("s", "plan", RunOptions{}); err == nil {
		t.Fatal("run succeeded, want model failure")
	}
	h.reopen()
	todos, err := h.eng.Todos("s")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(threePending, todos); diff != "" {
		t.Errorf("todos after failed run and restart (-want +got):\n%s", diff)
	}
}

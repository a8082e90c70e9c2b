package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	goopenai "github.com/sashabaranov/go-openai"
)

func storedMessages(t *testing.T, h *harness, id string) int {
	t.Helper()
	sess, err := h.store.LoadSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(sess.Messages)
}

// Past its budget the run ends after the step in progress, with no
// further model request; IntentProceed then asks again with the history
// exactly as it was stored, no new prompt.
func TestBudgetStopsAfterTheStepAndProceedGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"echo one"}`).WithUsage(60, 10),
		fakemodel.ToolCall("bash", `{"command":"echo two"}`).WithUsage(90, 10), // total 170 > 150
		fakemodel.Text("never asked"),
	)
	res, rec, err := h.run("s", "count", RunOptions{TokenBudget: 150})
	if !errors.Is(err, ErrBudget) || errors.Is(err, ErrOverBudget) {
		t.Fatalf("err = %v, want ErrBudget (stopped after a step)", err)
	}
	if got := h.srv.Calls(); got != 2 {
		t.Fatalf("model requests = %d, want 2: none after the budget was passed", got)
	}
	if res.Total.TotalTokens != 170 || rec.of(EventError)[0].Total.TotalTokens != 170 {
		t.Errorf("total = %+v", res.Total)
	}
	stopped := storedMessages(t, h, "s")
	if stopped != 5 { // prompt, call, result, call, result
		t.Fatalf("stored %d messages, want 5 (the last step kept)", stopped)
	}
	asked := h.lastRequest().Messages

	h.reopen()
	_, _, err = h.runRequest("s", Request{Intent: IntentProceed}, RunOptions{TokenBudget: 300})
	if err != nil {
		t.Fatal(err)
	}
	got := h.lastRequest().Messages
	if len(got) != len(asked)+2 { // the stored history: the last request, its answer and the result
		t.Fatalf("proceed sent %d messages, want %d", len(got), len(asked)+2)
	}
	if last := got[len(got)-1]; last.Role != goopenai.ChatMessageRoleTool || last.Content == "" {
		t.Errorf("proceed added a message after the stored history: %+v", last)
	}
	if diff := cmp.Diff(asked, got[:len(asked)]); diff != "" {
		t.Errorf("proceed changed the history (-before +now):\n%s", diff)
	}
	if n := storedMessages(t, h, "s"); n != stopped+1 {
		t.Errorf("after proceeding %d messages stored, want %d (only the answer)", n, stopped+1)
	}
}

// A session already over its budget does not start: no model request,
// nothing stored, not even the prompt.
func TestOverBudgetRunDoesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.Text("hello").WithUsage(100, 20))
	h.mustRun("s", "hi")
	before, calls := storedMessages(t, h, "s"), h.srv.Calls()

	_, rec, err := h.run("s", "more", RunOptions{TokenBudget: 100})
	if !errors.Is(err, ErrOverBudget) || !errors.Is(err, ErrBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	if h.srv.Calls() != calls || storedMessages(t, h, "s") != before {
		t.Errorf("an over-budget run asked the model or stored something")
	}
	if words := rec.of(EventError)[0].Text; words == "" {
		t.Error("no words for the user")
	}
	h.srv.Enqueue(fakemodel.Text("again"))
	if _, _, err := h.run("s", "more", RunOptions{TokenBudget: 120}); err != nil {
		t.Errorf("at its budget (120 = 120) the session runs: %v", err)
	}
}

// Proceeding from a history that ends with the model's answer has nothing
// to answer: it sends the continue prompt.
func TestProceedAfterAFinalAnswerContinues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.Text("first"), fakemodel.Text("second"))
	h.mustRun("s", "hi")
	h.mustRunRequest("s", Request{Intent: IntentProceed})
	msgs := h.lastRequest().Messages
	if last := msgs[len(msgs)-1]; last.Role != goopenai.ChatMessageRoleUser || last.Content != ContinuePrompt {
		t.Errorf("proceed after an answer sent %+v, want the continue prompt", last)
	}
}

// A run the budget stopped or refused is counted as such in the metrics.
func TestBudgetRunOutcome(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ErrBudget, ErrOverBudget} {
		if got := runOutcome(fmt.Errorf("run: %w", err)); got != outcomeBudget {
			t.Errorf("runOutcome(%v) = %q, want %q", err, got, outcomeBudget)
		}
	}
}

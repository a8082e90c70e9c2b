package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// Approve & confirm each step: every write_file/bash waits for a click in the
// thread; Approve lets it run, Reject goes back to the model as a refusal.
func TestConfirmEachStepApproveAndReject(t *testing.T) {
	e := newEnv(t)
	thread, review := e.planned("careful", "a:pending")

	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`),
		fakemodel.ToolCall("bash", `{"command":"rm hello.txt"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.Text("Wrote hello.txt; did not delete it."),
	)
	e.click(testUser, review.TS, render.ActionApproveConfirm)
	e.waitChecklist(thread, "confirm-each-step")

	first := e.waitMessage(thread, render.ActionStepApprove, 1)
	if !strings.Contains(string(first.Blocks), "hello.txt") {
		t.Errorf("approval does not show the path: %s", first.Blocks)
	}
	e.waitChecklist(thread, "awaiting approval")
	e.click(testUser, first.TS, render.ActionStepApprove)

	// The write is replaced by its decision; the bash step is the next one asking.
	second := e.nextStep(thread, first.TS)
	if !strings.Contains(string(second.Blocks), "rm hello.txt") {
		t.Errorf("approval does not show the command: %s", second.Blocks)
	}
	e.click(testUser, second.TS, render.ActionStepReject)
	e.waitMessage(thread, "did not delete it", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")

	for ts, verb := range map[string]string{first.TS: "approved", second.TS: "rejected"} {
		m, _ := e.slack.Message(testChannel, ts)
		if !strings.Contains(m.Text, verb) || strings.Contains(string(m.Blocks), render.ActionStepApprove) {
			t.Errorf("step message %s not replaced by %q: %q", ts, verb, m.Text)
		}
	}
	if !fileUnder(t, e.wsRoot, "hello.txt") {
		t.Error("the approved write did not happen, or the rejected rm ran")
	}
	if !e.modelReadRejection() {
		t.Error("the model did not get the rejection as a tool result")
	}
	// A second click on a decided step is explained, not acted on.
	e.clickValue(testUser, first.TS, render.ActionStepApprove, render.BlockApprovalActions,
		render.ButtonValue{SessionID: newSessionID(testTeam, testChannel, thread), StepID: "1"})
	e.waitEphemeral(testChannel, testUser, "no longer waiting")
}

// nextStep waits for a step approval in thread other than the one at ts.
func (e *env) nextStep(thread, ts string) fakeslack.Message {
	e.t.Helper()
	var next fakeslack.Message
	e.waitFor("the next step", func() bool {
		for _, m := range e.botMessages(thread, render.ActionStepReject) {
			if m.TS != ts {
				next = m
				return true
			}
		}
		return false
	})
	return next
}

// modelReadRejection: the last request holds a tool result saying the user rejected the call.
func (e *env) modelReadRejection() bool {
	reqs := e.model.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && strings.Contains(strings.ToLower(m.Content), "reject") {
			return true
		}
	}
	return false
}

func fileUnder(t *testing.T, root, name string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = true
		}
		return nil
	})
	return found
}

// Stop while a step waits for approval: the step message loses its buttons
// and says it was stopped; the step never runs.
func TestStopWhileStepAwaitsApproval(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	thread, review := e.planned("careful stop", "a:pending")
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"stopped.txt","content":"x"}`),
	)
	e.click(testUser, review.TS, render.ActionApproveConfirm)
	step := e.waitMessage(thread, render.ActionStepApprove, 1)
	cl := e.waitChecklist(thread, "awaiting approval", render.ActionStop)

	e.click(testUser, cl.TS, render.ActionStop)
	e.waitFor("the step message without buttons", func() bool {
		m, _ := e.slack.Message(testChannel, step.TS)
		return strings.Contains(m.Text, "Stopped by") && !strings.Contains(string(m.Blocks), render.ActionStepApprove)
	})
	// A click from a client that still shows the old buttons is explained.
	e.clickValue(testUser, step.TS, render.ActionStepApprove, render.BlockApprovalActions,
		render.ButtonValue{SessionID: newSessionID(testTeam, testChannel, thread), StepID: "1"})
	e.waitEphemeral(testChannel, testUser, "no longer waiting")
	e.waitMessage(thread, "Reply in this thread to continue", 1)
	e.waitChecklist(thread, "idle")
	if fileUnder(t, e.wsRoot, "stopped.txt") {
		t.Error("a stopped step ran")
	}
}

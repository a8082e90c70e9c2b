package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// Plan → checklist posted once, then edited → four buttons → Approve &
// auto-run → everything done, with x/y right and no extra model call.
func TestPlanApproveAutoRunToDone(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("Plan: first a, then b.", "a:pending", "b:pending")...)
	thread := e.startSession("plan", "build the thing")

	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	for _, id := range []string{render.ActionApproveAuto, render.ActionApproveConfirm, render.ActionKeepPlanning, render.ActionCancel} {
		if !strings.Contains(string(review.Blocks), id) {
			t.Errorf("review lacks button %s", id)
		}
	}
	for _, label := range []string{"Approve & auto-run", "Approve & confirm each step", "Keep planning", "Cancel"} {
		if !strings.Contains(blocksText(review), label) {
			t.Errorf("review lacks label %q", label)
		}
	}
	e.waitChecklist(thread, "0/2 tasks", "awaiting review")
	if c := e.checklist(thread); c.Updates == 0 {
		t.Error("checklist was never edited in place")
	}

	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:pending")),
		worked("a:completed", "b:in_progress"),
		worked("a:completed", "b:completed"),
		fakemodel.Text("Built a and b."),
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)

	e.waitMessage(thread, "Built a and b.", 1)
	e.waitChecklist(thread, "2/2 tasks", "done")
	decided, _ := e.slack.Message(testChannel, review.TS)
	if !strings.Contains(decided.Text, "chose") || strings.Contains(string(decided.Blocks), render.ActionApproveAuto) {
		t.Errorf("review not replaced by the decision: %q %s", decided.Text, decided.Blocks)
	}
	if got := e.model.Calls(); got != 6 {
		t.Errorf("model calls = %d, want 6 (2 planning + 4 executing, no continue)", got)
	}
	if got := e.lastUserMessage(2); got != agent.ExecPrompt {
		t.Errorf("execution started with %q, want the exec prompt", got)
	}
	if n := len(e.botMessages(thread, "h9_cl_title")); n != 1 {
		t.Errorf("%d checklist messages, want exactly 1", n)
	}
}

// Three runs in a row without a newly completed todo stop auto-run with a
// "stalled" message and no fourth run; a reply then resumes with guidance.
func TestStallAfterThreeEmptyRuns(t *testing.T) {
	e := newEnv(t)
	thread, review := e.planned("stall me", "a:pending", "b:pending")

	e.model.Enqueue(fakemodel.Text("thinking 1"), fakemodel.Text("thinking 2"), fakemodel.Text("thinking 3"))
	e.click(testUser, review.TS, render.ActionApproveAuto)
	stalled := e.waitMessage(thread, "Auto-run stalled", 1)
	e.waitChecklist(thread, "stalled", "0/2 tasks")
	if got := e.model.Calls(); got != 5 {
		t.Fatalf("model calls = %d, want 5 (2 planning + 3 runs, no fourth)", got)
	}
	if got := e.lastUserMessage(-1); got != agent.ContinuePrompt {
		t.Errorf("third run prompt = %q, want the continue prompt", got)
	}
	if !strings.Contains(string(stalled.Blocks), render.ActionResume) {
		t.Error("stalled message has no Resume button")
	}

	// A reply after the stall runs with that guidance and resumes auto-run.
	e.model.Enqueue(
		worked("a:completed", "b:pending"),
		fakemodel.Text("did a"),
		worked("a:completed", "b:completed"),
		fakemodel.Text("did b"),
	)
	e.reply(testUser, thread, "start with a, it is in main.go")
	e.waitMessage(thread, "did b", 1)
	e.waitChecklist(thread, "2/2 tasks", "done")
	if got := e.lastUserMessage(5); got != "start with a, it is in main.go" {
		t.Errorf("guidance run prompt = %q", got)
	}
	if got := e.lastUserMessage(-1); got != agent.ContinuePrompt {
		t.Errorf("after guidance, prompt = %q, want auto-run's continue prompt", got)
	}
}

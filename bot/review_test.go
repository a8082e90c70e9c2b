package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// A reply during review revises the plan; the old review's buttons are then
// refused with an explanation; Cancel on the new one cancels open todos.
func TestReplyRevisesPlanAndOldReviewIsRefused(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("Plan one.", "a:pending", "b:pending")...)
	thread := e.startSession("plan", "revise me")
	old := e.waitMessage(thread, render.ActionApproveAuto, 1)

	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending", "c:pending")...)
	e.reply(testUser, thread, "also do c")
	fresh := e.waitMessage(thread, render.ActionApproveAuto, 2)
	if !strings.Contains(string(fresh.Blocks), "revision 2") {
		t.Errorf("new review is not revision 2: %s", fresh.Blocks)
	}
	if got := e.lastUserMessage(-2); !strings.Contains(got, "also do c") {
		t.Errorf("revision run prompt = %q", got)
	}
	e.waitChecklist(thread, "0/3 tasks", "awaiting review")

	calls := e.model.Calls()
	e.click(testUser, old.TS, render.ActionApproveAuto)
	e.waitEphemeral(testChannel, testUser, "superseded")
	if e.model.Calls() != calls {
		t.Error("a click on a superseded review started a run")
	}

	e.click(testUser, fresh.TS, render.ActionCancel)
	e.waitChecklist(thread, "cancelled", render.IconCancelled, "0/3 tasks")
	decided, _ := e.slack.Message(testChannel, fresh.TS)
	if !strings.Contains(decided.Text, "Cancel") || strings.Contains(string(decided.Blocks), render.ActionCancel) {
		t.Errorf("review not replaced by the decision: %q", decided.Text)
	}
	// The decided review has no buttons left; the old one is still refused.
	e.click(testUser, old.TS, render.ActionCancel)
	if e.model.Calls() != calls {
		t.Error("cancel ran the model")
	}
}

// Keep planning keeps plan mode and invites a reply; the reply is a new plan.
func TestKeepPlanningThenReply(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("Plan one.", "a:pending")...)
	thread := e.startSession("plan", "keep planning")
	review := e.waitMessage(thread, render.ActionKeepPlanning, 1)
	e.click(testUser, review.TS, render.ActionKeepPlanning)
	e.waitMessage(thread, "Still planning", 1)

	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
	e.reply(testUser, thread, "split it in two")
	// The first review was replaced by the decision, so the new one is the only one with buttons.
	if fresh := e.waitMessage(thread, render.ActionKeepPlanning, 1); fresh.TS == review.TS {
		t.Error("no new review")
	}
	e.waitChecklist(thread, "0/2 tasks", "awaiting review", "planning")
}

// A plan-mode run that writes no todos says how to go on; no review.
func TestPlanWithoutTodos(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("I need to know which repository."))
	thread := e.startSession("plan", "vague")
	m := e.waitMessage(thread, "No plan yet", 1)
	if !strings.Contains(m.Text, "/h9 run &lt;task&gt;") || strings.Contains(m.Text, "<task>") {
		t.Errorf("usage hint is not escaped mrkdwn: %q", m.Text)
	}
	if n := len(e.botMessages(thread, render.ActionApproveAuto)); n != 0 {
		t.Errorf("%d review messages for an empty plan", n)
	}
}

// The plan summary is its own message, in mrkdwn, before the buttons; it
// stays in the thread after the decision replaces the review.
func TestPlanSummaryStaysAfterDecision(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("## The plan\n**First** read [the docs](https://go.dev/doc). <!channel>", "a:pending")...)
	thread := e.startSession("plan", "summarise")
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	summary := e.waitMessage(thread, "The plan", 1)
	if summary.TS == review.TS || summary.TS > review.TS {
		t.Fatalf("summary %s is not its own message before the review %s", summary.TS, review.TS)
	}
	got := blocksText(summary)
	for _, want := range []string{"*The plan*", "*First*", "<https://go.dev/doc|the docs>", "&lt;!channel&gt;"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q: %s", want, got)
		}
	}
	e.click(testUser, review.TS, render.ActionCancel)
	e.waitChecklist(thread, "cancelled")
	if m, _ := e.slack.Message(testChannel, summary.TS); !strings.Contains(blocksText(m), "*The plan*") {
		t.Errorf("summary changed after the decision: %s", m.Blocks)
	}
}

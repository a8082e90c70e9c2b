package bot

import (
	"fmt"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// say is how a plain post appears in a row's effects.
func notice(words string) string { return "post " + fmt.Sprintf("%q", render.Truncate(words, 80)) }

const stoppedWords = "Stopped by <@U2>. Reply in this thread to continue."

var runDoneRows = []row{
	{what: "a plan with todos opens the review at the next revision", from: sess(statePlanning, planMode, func(s *Session) { s.Revision = 1 }),
		ev: evRunDone{planRun: true, text: "Plan: a, then b.", todos: items(pending, pending)}, to: stateAwaitingReview,
		effects: []string{"show 0/2 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_plan_summary_0", "post review h9_review_ask"},
		check: func(t *testing.T, s Session) {
			wantInt(t, "revision", s.Revision, 2)
			wantPosts(t, s, "notice-1", "review-2") // recorded before they are posted
		}},
	{what: "a plan without todos says so and rests", from: sess(statePlanning, planMode),
		ev: evRunDone{planRun: true}, to: stateIdle,
		effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist",
			notice("No plan yet: the agent wrote no todo list. Reply in this thread with more detail and I will plan again, or start over with `/h9 run &lt;task&gt;` to skip planning.")}},
	{what: "a failed run posts its words with Retry", from: sess(statePlanning, planMode),
		ev: evRunDone{planRun: true, err: &agent.RunError{Text: "The model endpoint is down.", Err: agent.ErrModel}}, to: stateError,
		effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", "log run failed", "post h9_error"}},
	{what: "h9 stopping keeps the run in flight for the next start", from: sess(statePlanning, planMode),
		ev: evRunDone{stopping: true, planRun: true, err: agent.ErrCancelled}, to: statePlanning,
		effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh"}},
	{what: "auto-run: a todo completed, more open: the next run continues, counter reset", from: sess(stateRunning, autoRun, stuck(1, 0)),
		ev: evRunDone{todos: items(completed, running)}, to: stateRunning,
		effects: []string{"show 1/2 tasks", "forget the step", "flush the checklist", "save", "start continue (default)"},
		check:   func(t *testing.T, s Session) { wantInt(t, "stuck", s.Stuck, 0); wantInt(t, "prev done", s.PrevDone, 1) }},
	{what: "auto-run: nothing newly completed counts a run without progress", from: sess(stateRunning, autoRun, stuck(1, 1)),
		ev: evRunDone{todos: items(completed, running)}, to: stateRunning,
		effects: []string{"show 1/2 tasks", "forget the step", "flush the checklist", "save", "start continue (default)"},
		check:   func(t *testing.T, s Session) { wantInt(t, "stuck", s.Stuck, 2) }},
	{what: "auto-run: the third run in a row without progress stalls", from: sess(stateRunning, autoRun, stuck(2, 1)),
		ev: evRunDone{todos: items(completed, running)}, to: stateStalled,
		effects: []string{"show 1/2 tasks", "forget the step", "save", "refresh", "flush the checklist", "log auto-run stalled", "post h9_stalled"},
		check: func(t *testing.T, s Session) {
			wantInt(t, "stuck", s.Stuck, stallLimit)
			wantBool(t, "auto-run", s.AutoRun, false)
		}},
	{what: "auto-run: every todo completed is done", from: sess(stateRunning, autoRun, stuck(0, 1)),
		ev: evRunDone{text: "Built both.", todos: items(completed, completed)}, to: stateDone,
		effects: []string{"show 2/2 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_done"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "auto-run", s.AutoRun, false)
			wantPosts(t, s, "notice-1")
			wantBool(t, "active until posted", s.active(), true)
		}},
	{what: "a follow-up that leaves todos open rests with the agent's answer", from: sess(stateRunning),
		ev: evRunDone{text: "Answered.", todos: items(completed, pending)}, to: stateIdle,
		effects: []string{"show 1/2 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_reply_0"}},
	{what: "a follow-up that completes every todo is done", from: sess(stateRunning),
		ev: evRunDone{text: "All done.", todos: items(completed)}, to: stateDone,
		effects: []string{"show 1/1 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_done"}},
	{what: "a follow-up without words or todos posts nothing", from: sess(stateRunning),
		ev: evRunDone{}, to: stateIdle,
		effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist"}},
	{what: "a stopped run says who stopped it", from: sess(stateRunning, stoppedBy("U2")),
		ev: evRunDone{err: agent.ErrCancelled, todos: items(running)}, to: stateIdle,
		effects: []string{"show 0/1 tasks", "forget the step", "save", "refresh", "flush the checklist", notice(stoppedWords)},
		check:   func(t *testing.T, s Session) { wantString(t, "stopped by", s.StoppedBy, "") }},
	{what: "a queued reply runs next, its hourglass turned to eyes", from: sess(stateRunning, queued),
		ev: evRunDone{text: "First part done."}, to: stateRunning,
		effects: []string{"show 0/0 tasks", "forget the step", "flush the checklist", "post h9_reply_0",
			"unreact 1.9 hourglass_flowing_sand", "react 1.9 eyes", "save", "start reply (default) also b"},
		check: func(t *testing.T, s Session) { wantInt(t, "queue", len(s.Queue), 0) }},
	{what: "a queued reply goes before auto-run's next run", from: sess(stateRunning, autoRun, queued),
		ev: evRunDone{todos: items(completed, pending)}, to: stateRunning,
		effects: []string{"show 1/2 tasks", "forget the step", "flush the checklist",
			"unreact 1.9 hourglass_flowing_sand", "react 1.9 eyes", "save", "start reply (default) also b"},
		check: func(t *testing.T, s Session) {
			wantInt(t, "queue", len(s.Queue), 0)
			wantBool(t, "auto-run", s.AutoRun, true)
		}},
	{what: "h9 stopping keeps a pending approval, reported at the next start", from: sess(stateAwaitingApproval, pendingStep),
		ev: evRunDone{stopping: true, err: agent.ErrCancelled}, to: stateAwaitingApproval,
		effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh"},
		check: func(t *testing.T, s Session) {
			if s.Approval == nil {
				t.Error("the pending approval was dropped")
			}
		}},
}

var reviewRows = []row{
	{what: "Approve & auto-run executes the plan in default mode", from: sess(stateAwaitingReview, reviewOpen, stuck(2, 0)),
		ev: click(render.ActionApproveAuto), to: stateRunning,
		effects: []string{"update 1.5 h9_review_decided", "log review decided", "save", "start execute (default)"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "auto-run", s.AutoRun, true)
			wantInt(t, "stuck", s.Stuck, 0)
		}},
	{what: "Approve & confirm each step executes in auto-edit mode", from: sess(stateAwaitingReview, reviewOpen),
		ev: click(render.ActionApproveConfirm), to: stateRunning,
		effects: []string{"update 1.5 h9_review_decided", "log review decided", "save", "start execute (auto-edit)"}},
	{what: "Keep planning rests and asks for changes", from: sess(stateAwaitingReview, reviewOpen),
		ev: click(render.ActionKeepPlanning), to: stateIdle,
		effects: []string{"update 1.5 h9_review_decided", "log review decided", "save", "refresh",
			notice("Still planning. Reply in this thread with what to change and I will revise the plan.")}},
	{what: "Cancel cancels the open todos", from: sess(stateAwaitingReview, reviewOpen),
		ev: click(render.ActionCancel), to: stateAwaitingReview,
		effects: []string{"update 1.5 h9_review_decided", "log review decided", "cancel the open todos"}},
	{what: "the todos cancelled, the session rests cancelled", from: sess(stateAwaitingReview, reviewOpen, autoRun),
		ev: evTodosCancelled{todos: items(planning.TodoCancelled, planning.TodoCancelled)}, to: stateCancelled,
		effects: []string{"show 0/2 tasks", "save", "refresh"},
		check:   func(t *testing.T, s Session) { wantBool(t, "auto-run", s.AutoRun, false) }},
	{what: "todos that could not be cancelled are an error with Retry", from: sess(stateAwaitingReview, reviewOpen),
		ev: evCancelFailed{words: "store down"}, to: stateError,
		effects: []string{"post h9_error", "save", "refresh"}},
	{what: "a superseded review's buttons are refused", from: sess(stateAwaitingReview, reviewOpen),
		ev: click(render.ActionApproveAuto, revision(1)), to: stateAwaitingReview,
		effects: []string{"ephemeral to U1: This plan was superseded by a newer revision; use the buttons on the latest review in this thread."}},
	{what: "a review whose revision is being planned is closed", from: sess(statePlanning, reviewOpen),
		ev: click(render.ActionApproveAuto), to: statePlanning,
		effects: []string{"ephemeral to U1: This review is no longer open, so nothing happened."}},
	{what: "a review decided already is closed", from: sess(stateIdle, reviewOpen),
		ev: click(render.ActionApproveAuto), to: stateIdle,
		effects: []string{"ephemeral to U1: This review is no longer open, so nothing happened."}},
	{what: "a reply revises the plan", from: sess(stateAwaitingReview, reviewOpen, autoRun),
		ev: evReply{user: "U1", text: "also b", ts: "1.9"}, to: statePlanning,
		effects: []string{"save", "start reply (plan) also b"},
		check:   func(t *testing.T, s Session) { wantBool(t, "auto-run", s.AutoRun, false) }},
}

var stepRows = []row{
	{what: "a step to confirm is saved before its approval is posted", from: sess(stateRunning, confirmMode, func(s *Session) { s.StepSeq = 1 }),
		ev: evApprovalAsked{req: agent.ApprovalRequest{Tool: "bash", Summary: "go test", Preview: "go test ./..."}}, to: stateRunning,
		effects: []string{"save", "post approval h9_approval_ask"},
		check: func(t *testing.T, s Session) {
			if a := s.Approval; a == nil || a.StepID != "2" || a.Tool != "bash" || a.TS != "" {
				t.Errorf("approval = %+v, want step 2 for bash, not yet posted", a)
			}
		}},
	{what: "a step asked for while Stop is ending the run is refused unseen", from: sess(stateRunning, confirmMode, stoppedBy("U1")),
		ev: evApprovalAsked{req: agent.ApprovalRequest{Tool: "bash", Summary: "go test"}}, to: stateRunning,
		effects: []string{"answer the step false"},
		check:   func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "the approval posted, the step waits for a click", from: sess(stateRunning, pendingStep, func(s *Session) { s.Approval.TS = "" }),
		ev: evApprovalShown{ts: "1.7"}, to: stateAwaitingApproval,
		effects: []string{"save", "refresh"},
		check:   func(t *testing.T, s Session) { wantString(t, "approval ts", s.Approval.TS, "1.7") }},
	{what: "an approval nobody can see rejects the step", from: sess(stateRunning, pendingStep, func(s *Session) { s.Approval.TS = "" }),
		ev: evApprovalUnseen{}, to: stateRunning,
		effects: []string{"save", "answer the step false"},
		check:   func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "Approve runs the step", from: sess(stateAwaitingApproval, pendingStep),
		ev: click(render.ActionStepApprove), to: stateRunning,
		effects: []string{"update 1.7 h9_approval_decided", "log step decided", "save", "refresh", "answer the step true"},
		check:   func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "Reject refuses the step", from: sess(stateAwaitingApproval, pendingStep),
		ev: click(render.ActionStepReject), to: stateRunning,
		effects: []string{"update 1.7 h9_approval_decided", "log step decided", "save", "refresh", "answer the step false"}},
	{what: "an earlier step's buttons are refused", from: sess(stateAwaitingApproval, pendingStep),
		ev: click(render.ActionStepApprove, stepID("0")), to: stateAwaitingApproval,
		effects: []string{"ephemeral to U1: This step is no longer waiting for approval, so nothing happened."}},
	{what: "a step cut by a restart no longer waits", from: sess(stateInterrupted, confirmMode),
		ev: click(render.ActionStepApprove), to: stateInterrupted,
		effects: []string{"ephemeral to U1: This step is no longer waiting for approval, so nothing happened."}},
}

func wantInt(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

func wantBool(t *testing.T, what string, got, want bool) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %t, want %t", what, got, want)
	}
}

func wantString(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantNoApproval(t *testing.T, s Session) {
	t.Helper()
	if s.Approval != nil {
		t.Errorf("approval = %+v, want none", s.Approval)
	}
}

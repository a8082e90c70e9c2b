package bot

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// evReply is a user's message in the session's thread (issue 5): queued
// during a run or while the session is over its token budget; a plan
// revision in plan mode; after a stall, guidance that resumes auto-run
// with the counter reset; otherwise a follow-up.
type evReply struct {
	user, text, ts string
	files          []agent.Attachment // checked, downloaded when its run starts
}

func (e evReply) apply(m *move) {
	s := m.s
	parked := s.State == stateOverBudget && s.overBudget() // else the budget was raised in the configuration
	switch {
	case s.State.inFlight() || parked:
		s.Queue = append(s.Queue, QueuedReply{User: e.user, Text: e.text, TS: e.ts, Files: e.files})
		m.do(effSave{}, effReact{ts: e.ts, name: reactionQueued})
		if parked {
			m.postEphemeral(e.user, "This session has used its token budget, so your reply waits: it goes to the agent once the session's owner or an h9 admin presses Raise budget.")
		}
	case s.Repo != nil && !s.Repo.Ready:
		m.notReady(e)
	default:
		m.runReply(e.text, e.files)
	}
}

// runReply starts the run of a reply taken now (fresh, or from the queue).
func (m *move) runReply(text string, files []agent.Attachment) {
	s := m.s
	switch {
	case s.Mode == planning.PlanModePlan:
		// A new plan revision: the review on screen, if any, is superseded
		// once the new one is posted (its revision no longer matches).
		s.AutoRun = false
	case s.State == stateStalled:
		m.resetAutoRun()
	case s.State == stateInterrupted:
		s.Approval = nil
	}
	m.startRun(agent.Request{Intent: agent.IntentReply, Text: text})
	s.Files = files // read when the run is launched, after this move
}

// evClick is a button press by a user allowed to control the session.
type evClick struct {
	user, action string
	value        render.ButtonValue
}

func (e evClick) apply(m *move) {
	switch e.action {
	case render.ActionApproveAuto, render.ActionApproveConfirm, render.ActionKeepPlanning, render.ActionCancel:
		e.review(m)
	case render.ActionStepApprove, render.ActionStepReject:
		e.step(m)
	case render.ActionStop, actionNativeStop:
		e.stop(m)
	case render.ActionResume:
		e.resume(m)
	case render.ActionRetry:
		e.retry(m)
	case render.ActionRaiseBudget:
		e.raiseBudget(m)
	case render.ActionPushBranch, render.ActionOpenPR:
		e.repoAction(m)
	case render.ActionAddressFeedback, render.ActionIgnoreFeedback:
		e.feedbackAction(m)
	}
}

// review handles the four review buttons.
func (e evClick) review(m *move) {
	s := m.s
	switch {
	case e.value.Revision < s.Revision:
		m.postEphemeral(e.user, "This plan was superseded by a newer revision; use the buttons on the latest review in this thread.")
		return
	case s.State != stateAwaitingReview || e.value.Revision != s.Revision:
		m.postEphemeral(e.user, "This review is no longer open, so nothing happened.")
		return
	}
	m.do(effUpdate{ts: s.ReviewTS, msg: render.RenderReviewDecided(e.user, render.ChoiceLabel(e.action))})
	m.log("review decided", "user", e.user, "choice", e.action, "revision", s.Revision)
	switch e.action {
	case render.ActionApproveAuto:
		m.approvePlan(planning.PlanModeDefault)
	case render.ActionApproveConfirm:
		m.approvePlan(planning.PlanModeAutoEdit)
	case render.ActionKeepPlanning:
		s.State = stateIdle
		m.saveAndShow()
		m.postNotice(text("Still planning. Reply in this thread with what to change and I will revise the plan."))
	case render.ActionCancel:
		m.do(effCancelTodos{}) // → evTodosCancelled or evCancelFailed
	}
}

// approvePlan leaves plan mode and starts auto-run on the plan.
func (m *move) approvePlan(mode planning.PlanMode) {
	m.s.Mode = mode
	m.resetAutoRun()
	m.startRun(agent.Request{Intent: agent.IntentExecute})
}

// step handles Approve/Reject on a step.
func (e evClick) step(m *move) {
	s := m.s
	p := s.Approval
	if p == nil || e.value.StepID != p.StepID {
		m.postEphemeral(e.user, "This step is no longer waiting for approval, so nothing happened.")
		return
	}
	approved := e.action == render.ActionStepApprove
	m.do(effUpdate{ts: p.TS, msg: render.RenderApprovalDecided(e.user, approved, p.Tool, p.Summary)})
	m.log("step decided", "user", e.user, "approved", approved, "tool", p.Tool)
	s.Approval, s.State = nil, stateRunning
	m.saveAndShow()
	m.do(effAnswerStep{approved: approved})
}

// stop cancels the run in flight and auto-run; the run's end says so.
func (e evClick) stop(m *move) {
	s := m.s
	if !s.State.inFlight() {
		m.postEphemeral(e.user, "Nothing is running in this session.")
		return
	}
	m.log("stop requested", "user", e.user)
	s.StoppedBy, s.AutoRun = e.user, false
	m.do(effCancelRun{})
	if p := s.Approval; p != nil {
		// The step will not run: its buttons go, and a click that raced the
		// edit finds no pending step (the approver sees the cancelled run).
		s.Approval = nil
		m.do(effForgetStep{}, effUpdate{ts: p.TS, msg: render.RenderApprovalStopped(e.user, p.Tool, p.Summary)})
	}
	m.do(effSave{})
}

// resume restarts auto-run after a stall or an interrupted step.
func (e evClick) resume(m *move) {
	s := m.s
	switch {
	case s.State.inFlight():
		m.postEphemeral(e.user, "This session is already running.")
	case s.State != stateStalled && s.State != stateInterrupted:
		m.postEphemeral(e.user, "There is nothing to resume in this session.")
	default:
		s.Approval = nil
		m.resetAutoRun()
		m.startRun(agent.Request{Intent: agent.IntentContinue})
	}
}

// retry asks the failed run's request again.
func (e evClick) retry(m *move) {
	s := m.s
	switch {
	case s.State.inFlight():
		m.postEphemeral(e.user, "This session is already running.")
	case s.State != stateError && s.State != stateSetupFailed:
		m.postEphemeral(e.user, "There is no failed run to retry in this session.")
	default:
		m.startRun(s.Request)
	}
}

// raiseBudget adds the configured budget once more and starts the run
// the budget stopped (auto-run as it was); still over, it stops again.
func (e evClick) raiseBudget(m *move) {
	s := m.s
	if s.State != stateOverBudget {
		m.postEphemeral(e.user, "This session is not stopped at its token budget, so nothing happened.")
		return
	}
	s.BudgetRaises++
	m.log("budget raised", "user", e.user, "budget", s.budget())
	if s.BudgetTS != "" {
		m.do(effUpdate{ts: s.BudgetTS, msg: render.RenderBudgetRaised(e.user, s.budget())})
		s.BudgetTS = ""
	}
	m.startRun(s.Request)
}

// evTodosCancelled: Cancel marked the open todos cancelled; the session rests.
type evTodosCancelled struct{ todos []planning.TodoItem }

func (e evTodosCancelled) apply(m *move) {
	s := m.s
	s.AutoRun, s.State, s.Progress = false, stateCancelled, planning.Summarize(e.todos)
	m.do(effSetTodos{todos: e.todos, keepEvidence: true})
	m.saveAndShow()
}

// evCancelFailed: the todos could not be cancelled.
type evCancelFailed struct{ words string }

func (e evCancelFailed) apply(m *move) {
	m.s.State = stateError
	m.postNotice(render.RenderError(m.s.ID, "h9 failed cancelling the plan: "+e.words))
	m.saveAndShow()
}

// The reactions h9 puts on a reply: queued behind the current run, then
// picked up when h9 starts on it.
const (
	reactionQueued   = "hourglass_flowing_sand"
	reactionPickedUp = "eyes"
)

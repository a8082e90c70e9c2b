package bot

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// onAction checks who clicked on what, then routes the click.
func (a *actor) onAction(m msgAction, exists bool) {
	if !exists {
		a.b.log.Warn("click for an unknown session refused", "session", a.id, "user", m.user)
		a.b.api.ephemeral(a.b.bg, a.b.log, m.channel, m.user, "", text("That button belongs to a session h9 does not know, so nothing happened."))
		return
	}
	if !a.b.perms.canControl(a.rec, m.user) {
		a.tell(m.user, "Only <@"+a.rec.Owner+">, who started this session, or an h9 admin can use these buttons.")
		return
	}
	switch m.action {
	case render.ActionApproveAuto, render.ActionApproveConfirm, render.ActionKeepPlanning, render.ActionCancel:
		a.onReview(m)
	case render.ActionStepApprove, render.ActionStepReject:
		a.onStep(m)
	case render.ActionStop:
		a.onStop(m.user)
	case render.ActionResume:
		a.onResume(m.user)
	case render.ActionRetry:
		a.onRetry(m.user)
	}
}

// onStop cancels the run in flight and auto-run.
func (a *actor) onStop(user string) {
	if a.run == nil {
		a.tell(user, "Nothing is running in this session.")
		return
	}
	a.log.Info("stop requested", "user", user)
	a.run.stoppedBy = user
	a.rec.AutoRun = false
	a.run.cancel()
	if p := a.rec.Approval; p != nil {
		// The step will not run: its buttons go, and a click that raced the
		// edit finds no pending step (the approver sees the cancelled run).
		a.rec.Approval, a.waiter = nil, nil
		_ = a.b.api.update(a.b.bg, a.log, a.rec.Channel, p.TS, render.RenderApprovalStopped(user, p.Tool, p.Summary))
	}
	a.save()
}

// onResume restarts auto-run after a stall or an interrupted step.
func (a *actor) onResume(user string) {
	rec := a.rec
	if a.run != nil {
		a.tell(user, "This session is already running.")
		return
	}
	if rec.State != render.StateStalled && rec.State != render.StateInterrupted {
		a.tell(user, "There is nothing to resume in this session.")
		return
	}
	rec.Approval = nil
	a.resetAutoRun()
	a.dispatch(agent.ContinuePrompt)
}

// onRetry runs the failed prompt again.
func (a *actor) onRetry(user string) {
	rec := a.rec
	if a.run != nil {
		a.tell(user, "This session is already running.")
		return
	}
	if rec.State != render.StateError {
		a.tell(user, "There is no failed run to retry in this session.")
		return
	}
	a.dispatch(rec.retryPrompt())
}

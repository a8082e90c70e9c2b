package bot

import (
	"strings"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// afterPlan follows a plan-mode run: the review with its four buttons when
// there is a plan, otherwise the agent's words and how to go on.
func (a *actor) afterPlan(finalText string, todos []planning.TodoItem) {
	rec := a.rec
	if len(todos) == 0 {
		rec.State = render.StateIdle
		msg := "No plan yet: the agent wrote no todo list."
		if finalText != "" {
			msg = render.Escape(render.Truncate(finalText, 3000)) + "\n\n" + msg
		}
		a.say(text(msg + " Reply in this thread with more detail and I will plan again, or start over with `/h9 run &lt;task&gt;` to skip planning."))
		return
	}
	rec.Revision++
	rec.State = render.StateAwaitingReview
	// The summary is its own message so it stays when the decision replaces
	// the buttons; without one, the checklist is the plan.
	if strings.TrimSpace(finalText) != "" {
		a.say(render.RenderPlanSummary(finalText))
	}
	rec.ReviewTS = a.say(render.RenderReviewAsk(rec.ID, rec.Revision))
}

// onReview handles the four review buttons.
func (a *actor) onReview(m msgAction) {
	rec := a.rec
	switch {
	case m.value.Revision < rec.Revision:
		a.tell(m.user, "This plan was superseded by a newer revision; use the buttons on the latest review in this thread.")
		return
	case rec.State != render.StateAwaitingReview || m.value.Revision != rec.Revision || a.run != nil:
		a.tell(m.user, "This review is no longer open, so nothing happened.")
		return
	}
	_ = a.b.api.update(a.b.bg, a.log, rec.Channel, rec.ReviewTS, render.RenderReviewDecided(m.user, render.ChoiceLabel(m.action)))
	a.log.Info("review decided", "user", m.user, "choice", m.action, "revision", rec.Revision)
	switch m.action {
	case render.ActionApproveAuto:
		a.approvePlan(planning.PlanModeDefault)
	case render.ActionApproveConfirm:
		a.approvePlan(planning.PlanModeAutoEdit)
	case render.ActionKeepPlanning:
		rec.State = render.StateIdle
		a.save()
		a.refresh()
		a.say(text("Still planning. Reply in this thread with what to change and I will revise the plan."))
	case render.ActionCancel:
		a.cancelPlan()
	}
}

// approvePlan leaves plan mode and starts auto-run with the exec prompt.
func (a *actor) approvePlan(mode planning.PlanMode) {
	a.rec.Mode = mode // the run takes it from the record
	a.resetAutoRun()
	a.dispatch(agent.ExecPrompt)
}

// cancelPlan: nothing runs, open todos become cancelled, the session rests.
func (a *actor) cancelPlan() {
	rec := a.rec
	todos, err := a.b.cfg.Agent.CancelOpenTodos(a.id)
	if err != nil {
		a.fail("cancelling the plan", err.Error())
		return
	}
	rec.AutoRun = false
	rec.State = render.StateCancelled
	rec.Progress = planning.Summarize(todos)
	a.check.set(func(c *render.Checklist) { c.Todos = todos })
	a.save()
	a.refresh()
}

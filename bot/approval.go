package bot

import (
	"context"
	"strconv"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// approver is the run's agent.Approver in confirm-each-step mode: it asks
// the actor to post the step and waits for the click (or the run's end).
func (a *actor) approver(h *runHandle) agent.Approver {
	return func(ctx context.Context, req agent.ApprovalRequest) (bool, error) {
		reply := make(chan bool, 1)
		a.push(msgApprovalAsk{run: h, req: req, reply: reply})
		select {
		case ok := <-reply:
			return ok, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// onApprovalAsk posts the step with Approve/Reject and persists it.
func (a *actor) onApprovalAsk(m msgApprovalAsk) {
	rec := a.rec
	if a.run != m.run || rec == nil {
		m.reply <- false
		return
	}
	rec.StepSeq++
	step := strconv.Itoa(rec.StepSeq)
	// Persisted before the post: a crash right after posting must find the
	// approval pending (and report it interrupted), not resume the run.
	rec.Approval = &PendingApproval{StepID: step, Tool: m.req.Tool, Summary: m.req.Summary}
	a.save()
	ts := a.say(render.RenderApproval(rec.ID, step, m.req.Tool, m.req.Summary, m.req.Preview))
	if ts == "" {
		// The user cannot see the step, so it must not run.
		rec.Approval = nil
		a.save()
		m.reply <- false
		return
	}
	rec.Approval.TS = ts
	rec.State = render.StateAwaitingApproval
	a.waiter = m.reply
	a.save()
	a.refresh()
}

// onStep handles Approve/Reject on a step.
func (a *actor) onStep(m msgAction) {
	rec := a.rec
	if rec.Approval == nil || m.value.StepID != rec.Approval.StepID {
		a.tell(m.user, "This step is no longer waiting for approval, so nothing happened.")
		return
	}
	if a.waiter == nil {
		a.tell(m.user, "h9 restarted while this step was waiting; press Resume in this thread to continue.")
		return
	}
	approved := m.action == render.ActionStepApprove
	p := rec.Approval
	_ = a.b.api.update(a.b.bg, a.log, rec.Channel, p.TS, render.RenderApprovalDecided(m.user, approved, p.Tool, p.Summary))
	a.log.Info("step decided", "user", m.user, "approved", approved, "tool", p.Tool)
	w := a.waiter
	a.waiter, rec.Approval, rec.State = nil, nil, render.StateRunning
	a.save()
	a.refresh()
	w <- approved
}

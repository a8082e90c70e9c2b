package bot

import (
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// onReply handles a user's message in the session's thread (issue 5):
// queued during a run; a plan revision in plan mode; after a stall, guidance
// that resumes auto-run with the counter reset; otherwise a follow-up.
func (a *actor) onReply(user, msg, ts string) {
	rec := a.rec
	if why := a.b.perms.refusal(user, rec.Channel); why != "" {
		a.tell(user, why)
		return
	}
	if msg == "" {
		return
	}
	if a.run != nil {
		rec.Queue = append(rec.Queue, QueuedReply{User: user, Text: msg, TS: ts})
		a.save()
		a.b.api.react(a.b.bg, a.log, rec.Channel, ts, reactionQueued)
		return
	}
	switch {
	case rec.Mode == planning.PlanModePlan:
		// A new plan revision: the review on screen, if any, is superseded
		// once the new one is posted (its revision no longer matches).
		rec.AutoRun = false
	case rec.State == render.StateStalled:
		a.resetAutoRun()
	case rec.State == render.StateInterrupted || rec.State == render.StateAwaitingApproval:
		rec.Approval = nil
	}
	a.dispatch(msg)
}

// onQueuedReply handles a reply held during a run: its hourglass becomes
// eyes (h9 is on it), then it is handled like a fresh reply.
func (a *actor) onQueuedReply(q QueuedReply) {
	if q.TS != "" {
		a.b.api.unreact(a.b.bg, a.log, a.rec.Channel, q.TS, reactionQueued)
		a.b.api.react(a.b.bg, a.log, a.rec.Channel, q.TS, reactionPickedUp)
	}
	a.onReply(q.User, q.Text, q.TS)
}

// resetAutoRun turns auto-run back on with the stall counter at zero.
func (a *actor) resetAutoRun() {
	a.rec.AutoRun = true
	a.rec.Stuck = 0
	a.rec.PrevDone = a.rec.Progress.Completed
}

package bot

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// restartNotice is posted in a session's thread when h9 resumes its run.
const restartNotice = "h9 restarted and is resuming this session."

// recoverSessions hands every session that was running or waiting for a
// step approval to its actor. Other sessions need nothing: their buttons
// work from the store.
func (b *Bot) recoverSessions() {
	ids, err := b.store.activeIDs()
	if err != nil {
		b.log.Error("recovering sessions", "err", err)
		return
	}
	if len(ids) > 0 {
		b.log.Info("recovering sessions", "count", len(ids))
	}
	for _, id := range ids {
		b.reg.deliver(id, msgRecover{})
	}
}

// onRecover resumes a run cut by a restart, or reports an interrupted step.
func (a *actor) onRecover() {
	rec := a.rec
	if a.run != nil {
		return
	}
	if rec.Approval != nil {
		what := "the approval of " + rec.Approval.Tool + " `" + render.Truncate(rec.Approval.Summary, 200) + "`" // RenderInterrupted escapes
		rec.Approval, rec.Running, rec.State = nil, false, render.StateInterrupted
		a.log.Info("step approval interrupted by a restart")
		a.say(render.RenderInterrupted(rec.ID, what))
		a.save()
		a.refresh()
		return
	}
	if !rec.Running {
		return
	}
	rec.Running = false
	a.log.Info("resuming after a restart", "auto_run", rec.AutoRun)
	a.say(text(restartNotice))
	prompt := agent.ContinuePrompt
	if rec.Mode == planning.PlanModePlan {
		prompt = rec.retryPrompt()
	}
	a.dispatch(prompt)
}

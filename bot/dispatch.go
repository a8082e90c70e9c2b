package bot

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// stallLimit is the seed's threshold: this many runs in a row without a
// newly completed todo stop auto-run.
const stallLimit = 3

// runHandle is one agent run in flight.
type runHandle struct {
	seq       int
	cancel    context.CancelFunc
	mode      planning.PlanMode
	stoppedBy string       // the user who pressed Stop
	gate      func() error // see agent.RunOptions.Gate
}

// create starts a new session in a thread: the record, then the first
// run, while the checklist is posted in its first state.
func (a *actor) create(team, channel, thread, owner, task string, mode planning.PlanMode) {
	now := time.Now()
	a.rec = &Session{
		ID: a.id, Team: team, Channel: channel, ThreadTS: thread, Task: task, Owner: owner,
		Mode: mode, AutoRun: mode != planning.PlanModePlan, Created: now, Updated: now,
	}
	a.markRunning(task)
	a.log.Info("session created", "owner", owner, "mode", mode.String())
	// The record's commit overlaps the run's start (loading the session,
	// building the prompt); the run's gate waits for it before the first
	// model request, so a crash after that always finds the session to
	// resume. The run takes its mode from the record: no mode to commit.
	saveRecord := a.b.store.writer(a.rec)
	saved := make(chan error, 1)
	go func() {
		err := saveRecord()
		if err != nil {
			a.log.Error("saving session", "err", err)
		}
		saved <- err
	}()
	// The checklist is posted by its own flush, so the first run does not
	// wait for Slack; its ts reaches the record through msgChecklistPosted.
	a.check = a.newChecklist("", a.view(nil))
	a.check.postNow()
	a.launch(task, func() error { return <-saved })
}

// runState is the state shown while a run of that mode is in flight.
func runState(mode planning.PlanMode) render.State {
	if mode == planning.PlanModePlan {
		return render.StatePlanning
	}
	return render.StateRunning
}

// dispatch starts a run unless one is in flight (the seed's guard).
func (a *actor) dispatch(prompt string) {
	if a.run != nil {
		a.log.Warn("dispatch while a run is in flight; ignored")
		return
	}
	a.markRunning(prompt)
	a.save()
	a.launch(prompt, nil)
}

// markRunning records that a run of prompt is in flight (saved by the caller).
func (a *actor) markRunning(prompt string) {
	rec := a.rec
	rec.LastPrompt, rec.Running, rec.State = prompt, true, runState(rec.Mode)
}

// launch starts the run marked in the record; gate (optional) must pass
// before the run's first model request.
func (a *actor) launch(prompt string, gate func() error) {
	ctx, cancel := context.WithCancel(a.b.runCtx)
	a.seq++
	a.run = &runHandle{seq: a.seq, cancel: cancel, mode: a.rec.Mode, gate: gate}
	a.refresh()
	go a.execute(ctx, a.run, prompt)
}

// execute runs the agent on its own goroutine and reports to the inbox.
func (a *actor) execute(ctx context.Context, h *runHandle, prompt string) {
	done := msgRunDone{run: h}
	defer func() { a.push(done) }()
	if slots := a.b.runSlots; slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			done.err = ctx.Err()
			return
		}
	}
	// The record's mode is the run's: the agent stores it with the run.
	opts := agent.RunOptions{Mode: &h.mode, Gate: h.gate, Events: func(ev agent.Event) {
		if ev.Kind == agent.EventError {
			done.errText = ev.Text
		}
		a.onEvent(ev)
	}}
	if h.mode == planning.PlanModeAutoEdit {
		opts.Approve = a.approver(h)
	}
	done.res, done.err = a.b.cfg.Agent.Run(ctx, a.id, prompt, opts)
}

// onEvent runs on the run's goroutine: it only feeds the checklist.
func (a *actor) onEvent(ev agent.Event) {
	switch ev.Kind {
	case agent.EventTodos:
		todos := slices.Clone(ev.Todos)
		a.check.set(func(c *render.Checklist) { c.Todos = todos })
	case agent.EventToolStarted:
		activity := ev.Tool
		if ev.Summary != "" {
			activity += ": " + ev.Summary
		}
		a.check.set(func(c *render.Checklist) { c.Activity = activity })
	}
}

// onRunDone is the seed's EventDone: decide what follows a run.
func (a *actor) onRunDone(m msgRunDone) {
	h := a.run
	if h == nil || m.run != h {
		return
	}
	a.run, a.waiter = nil, nil
	h.cancel()
	rec := a.rec
	rec.Running = false
	todos := m.res.Todos
	if m.err != nil || todos == nil {
		if t, err := a.b.cfg.Agent.Todos(a.id); err == nil {
			todos = t
		}
	}
	rec.Progress = planning.Summarize(todos)
	a.check.set(func(c *render.Checklist) { c.Todos = slices.Clone(todos) })
	if a.b.stopping.Load() {
		rec.Running = true // resumed by the next start; a pending approval becomes "interrupted"
		a.save()
		a.refresh()
		return
	}
	rec.Approval = nil
	a.check.settle() // the outcome below is posted after the checklist shows its todos
	next := ""
	switch {
	case h.stoppedBy != "":
		rec.AutoRun = false
		rec.State = render.StateIdle
		a.say(text("Stopped by <@" + h.stoppedBy + ">. Reply in this thread to continue."))
	case m.err != nil:
		a.log.Error("run failed", "err", m.err)
		rec.State = render.StateError
		a.say(render.RenderError(rec.ID, "The run failed: "+errorWords(m.errText, m.err)))
	case h.mode == planning.PlanModePlan:
		a.afterPlan(m.res.Text, todos)
	case rec.AutoRun:
		next = a.afterAutoRun(m.res.Text, rec.Progress)
	default:
		a.afterFollowUp(m.res.Text, rec.Progress)
	}
	a.save()
	a.refresh()
	if a.drainQueue() {
		return
	}
	if next != "" {
		a.dispatch(next)
	}
}

// afterAutoRun is the seed's auto-run decision; it returns the next prompt
// or "" when auto-run ends (done or stalled).
func (a *actor) afterAutoRun(finalText string, p planning.Progress) string {
	rec := a.rec
	pending, done := p.Active, p.Completed
	if pending > 0 {
		if done > rec.PrevDone {
			rec.Stuck = 0
		} else {
			rec.Stuck++
		}
		if rec.Stuck < stallLimit {
			rec.PrevDone = done
			return agent.ContinuePrompt
		}
		rec.AutoRun = false
		rec.State = render.StateStalled
		a.log.Info("auto-run stalled", "runs", rec.Stuck, "progress", p.String())
		a.say(render.RenderStalled(rec.ID, rec.Stuck))
		return ""
	}
	rec.AutoRun = false
	rec.State = render.StateDone
	a.say(render.RenderDone(finalText, p))
	return ""
}

// afterFollowUp reports a run outside auto-run.
func (a *actor) afterFollowUp(finalText string, p planning.Progress) {
	if p.Total > 0 && p.Active == 0 {
		a.rec.State = render.StateDone
		a.say(render.RenderDone(finalText, p))
		return
	}
	a.rec.State = render.StateIdle
	if finalText != "" {
		a.say(render.RenderAgentText(finalText))
	}
}

// drainQueue handles the oldest queued reply; true when it did.
func (a *actor) drainQueue() bool {
	if len(a.rec.Queue) == 0 {
		return false
	}
	q := a.rec.Queue[0]
	a.rec.Queue = slices.Delete(a.rec.Queue, 0, 1)
	a.onQueuedReply(q)
	return true
}

// fail records an error state and posts it with a Retry button.
func (a *actor) fail(what, words string) {
	a.rec.State = render.StateError
	a.rec.Running = false
	a.say(render.RenderError(a.rec.ID, "h9 failed "+what+": "+words))
	a.save()
	a.refresh()
}

// errorWords prefers the agent's user-facing words over the Go error.
func errorWords(userText string, err error) string {
	switch {
	case userText != "":
		return userText
	case errors.Is(err, context.DeadlineExceeded):
		return "it took too long"
	}
	return render.Truncate(err.Error(), 500)
}

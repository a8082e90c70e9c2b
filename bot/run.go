package bot

import (
	"context"
	"io"
	"slices"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// runHandle is one agent run in flight.
type runHandle struct {
	seq    int
	cancel context.CancelFunc
	mode   planning.PlanMode
	budget int          // the session's token budget, 0: none
	gate   func() error // see agent.RunOptions.Gate
	// checkpoint commits a completed todo's changes (a session with a
	// repository, in execution mode); nil: none.
	checkpoint agent.Checkpointer
	files      []agent.Attachment // shared with the request, to download first
	share      agent.FileSharer   // share_file's uploads into the thread
	// channel is the session's channel, for its instructions; channel and
	// repo scope the run's MCP tools (agent.RunOptions).
	channel, repo string
	stream        *runStream // the run's text into the thread; nil: off
}

// launch starts the run e asks for, unless one is in flight (the Planning module's
// dispatch guard; the state machine never asks for a second).
func (a *actor) launch(e effStartRun) {
	if a.run != nil {
		a.log.Warn("a run was asked for while one is in flight; ignored")
		return
	}
	var gate func() error
	if saved := a.saving; e.gated && saved != nil {
		a.saving = nil
		gate = func() error { return <-saved }
	}
	// The run's Slack calls (share_file's uploads) are the session's, so
	// under its lease like the actor's own: a run that outlives the lease
	// before the actor hears of it posts nothing.
	ctx, cancel := context.WithCancel(withLease(a.b.runCtx, a.leaseHeld))
	a.seq++
	a.run = &runHandle{seq: a.seq, cancel: cancel, mode: e.mode, budget: e.budget, gate: gate}
	if e.req == a.rec.Request {
		a.run.files = slices.Clone(a.rec.Files)
	}
	a.stream = a.startStream()
	a.run.stream = a.stream
	a.run.share, a.run.channel = a.sharer(a.rec.Channel, a.rec.ThreadTS), a.rec.Channel
	if r := a.rec.Repo; r != nil {
		a.run.repo = r.Name
	}
	if r := a.rec.Repo; r != nil && r.Ready && e.mode != planning.PlanModePlan && a.b.cfg.Repos != nil {
		a.run.checkpoint = a.b.checkpointer(a.log, *r, a.rec.ID, a.rec.Owner)
	}
	a.refresh()
	id, h := a.rec.ID, a.run
	a.b.tasks.spawn(func() { a.execute(ctx, id, h, e.req) })
}

// execute runs the agent on its own goroutine and reports to the inbox.
// It touches nothing of the actor's but its inbox and checklist.
func (a *actor) execute(ctx context.Context, id string, h *runHandle, req agent.Request) {
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
	var files []agent.Attachment
	req, files = a.withAttachments(ctx, id, req, h.files)
	opts := agent.RunOptions{Files: files, Share: h.share, ChannelInstructions: a.b.channelInstructions(ctx, a.log, h.channel), Mode: h.mode, Gate: h.gate, Events: a.eventsOf(h), TokenBudget: h.budget, Checkpoint: h.checkpoint, Channel: h.channel, Repo: h.repo, Durable: a.b.bg}
	if h.mode == planning.PlanModeAutoEdit {
		opts.Approve = a.approver(h)
	}
	done.res, done.err = a.b.cfg.Agent.Run(ctx, id, req, opts)
}

// eventsOf is the run's event handler: its text goes to its stream.
func (a *actor) eventsOf(h *runHandle) func(agent.Event) {
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventTextDelta, agent.EventTextRetracted:
			if h.stream != nil {
				h.stream.feed(ev)
			}
		default:
			a.onEvent(ev)
		}
	}
}

// onEvent runs on the run's goroutine: it only feeds the checklist. The
// tokens change with every step; they show with the next edit rather than
// making one of their own.
func (a *actor) onEvent(ev agent.Event) {
	switch ev.Kind {
	case agent.EventTodos:
		todos, evidence := slices.Clone(ev.Todos), ev.Evidence
		a.check.set(func(c *render.Checklist) { c.Todos, c.Evidence = todos, evidence })
	case agent.EventUsage, agent.EventRunStarted:
		spend := a.b.cfg.tokenRules().spend(ev.Total)
		a.check.note(func(c *render.Checklist) { c.Spend = spend })
	case agent.EventImagesRefused:
		a.push(msgNote{text: ev.Text})
	case agent.EventToolStarted:
		activity := ev.Tool
		if ev.Summary != "" {
			activity += ": " + ev.Summary
		}
		a.check.startActivity(activity)
	case agent.EventToolFinished:
		a.check.endActivity()
	}
}

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

// runDone is the event a finished run makes: its outcome, and the todos,
// their evidence and the tokens at its end (the agent's store's when the
// run failed; a run that ended well says them, and nil todos are none).
func (a *actor) runDone(h *runHandle, res agent.Result, err error) evRunDone {
	todos, evidence, tokens := res.Todos, res.Evidence, res.Total
	if err != nil {
		if snap, serr := a.b.cfg.Agent.Snapshot(a.b.bg, a.rec.ID); serr == nil {
			todos, evidence, tokens = snap.Todos, snap.Evidence, snap.Total
		}
	}
	return evRunDone{stopping: a.b.stopping.Load(), planRun: h.mode == planning.PlanModePlan, text: res.Text,
		todos: todos, evidence: evidence, tokens: tokens, err: err}
}

// sharer is the run's agent.FileSharer: share_file's uploads go into the
// session's thread, after its checklist. channel and thread are taken on
// the actor, before the run starts.
func (a *actor) sharer(channel, thread string) agent.FileSharer {
	check, api, log := a.check, a.b.api, a.log
	return func(ctx context.Context, name, title string, r io.Reader, size int64) error {
		if check != nil {
			check.waitFirstPost()
		}
		return api.UploadFrom(ctx, log, channel, thread, name, title, r, size)
	}
}

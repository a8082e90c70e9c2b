package bot

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// The effects a transition asks for, and how the actor carries them out.
// An effect reads the session as it is when it runs (a.rec): an earlier
// effect of the same transition may have applied an event to it (a post's
// ts), which a later save then stores.

type (
	// effSave persists the session; effSaveForGate starts that commit and
	// lets the next gated run wait for it (a new session's first run).
	effSave        struct{}
	effSaveForGate struct{}
	// effRefresh shows the session's task, mode and state on the checklist.
	effRefresh struct{}
	// effSetTodos shows todos and their evidence on the checklist
	// (keepEvidence: the evidence it shows stays).
	effSetTodos struct {
		todos        []planning.TodoItem
		evidence     map[string]planning.Evidence
		keepEvidence bool
	}
	// effFlushChecklist sends the checklist's pending edit before what follows.
	effFlushChecklist struct{}
	// effPostChecklist posts a new session's checklist, off the actor.
	effPostChecklist struct{}
	// effPost posts a pending post (posts.go), then reports it (evPosted);
	// effPostApproval posts a step's approval and reports it
	// (evApprovalShown or evApprovalUnseen). effFinishPosts finishes the
	// posts a previous holder left pending.
	effPost struct {
		key, kind string
		msg       render.Message
	}
	effPostApproval struct{ msg render.Message }
	effFinishPosts  struct{}
	// effPostEphemeral answers one user privately in the thread.
	effPostEphemeral struct{ user, text string }
	// effUpdate edits a message of the session (a review, an approval).
	effUpdate struct {
		ts  string
		msg render.Message
	}
	effReact   struct{ ts, name string }
	effUnreact struct{ ts, name string }
	// effStartRun starts the session's run of req in mode; gated: its
	// first model request waits for effSaveForGate's commit.
	effStartRun struct {
		req    agent.Request
		mode   planning.PlanMode
		budget int // the session's token budget, 0: none
		gated  bool
	}
	// effCancelRun cancels the run in flight.
	effCancelRun struct{}
	// effAnswerStep answers the run waiting for a step's approval;
	// effForgetStep drops that wait (the run is ending).
	effAnswerStep struct{ approved bool }
	effForgetStep struct{}
	// effCancelTodos cancels the open todos (→ evTodosCancelled or evCancelFailed).
	effCancelTodos struct{}
	// effPrepare makes the session's checkout and runs the repository's
	// setup, off the actor (→ evPrepared).
	effPrepare struct{}
	// effRepoOutcome posts a done session's changes with Push branch and
	// Open pull request, after a last checkpoint, and uploads the diff.
	effRepoOutcome struct{}
	// effPush pushes the session branch, and opens its pull request when
	// asked, off the actor; the thread hears how it went.
	effPush struct {
		user        string
		pullRequest bool
	}
	// effLog writes a line to the session's log.
	effLog struct {
		level slog.Level
		msg   string
		args  []any
	}
)

func (effSave) run(a *actor)        { a.save() }
func (effSaveForGate) run(a *actor) { a.saveForGate() }
func (effRefresh) run(a *actor)     { a.refresh() }
func (e effSetTodos) run(a *actor) {
	a.check.set(func(c *render.Checklist) {
		c.Todos = slices.Clone(e.todos)
		if !e.keepEvidence {
			c.Evidence = e.evidence
		}
	})
}
func (effFlushChecklist) run(a *actor)  { a.check.flushNow() }
func (e effPost) run(a *actor)          { a.postPending(e.key) }
func (effFinishPosts) run(a *actor)     { a.finishPosts() }
func (e effPostEphemeral) run(a *actor) { a.postEphemeral(e.user, e.text) }
func (e effUpdate) run(a *actor)        { _ = a.b.api.Update(a.ctx, a.log, a.rec.Channel, e.ts, e.msg) }
func (e effReact) run(a *actor)         { a.b.api.React(a.ctx, a.log, a.rec.Channel, e.ts, e.name) }
func (e effStartRun) run(a *actor)      { a.launch(e) }
func (effForgetStep) run(a *actor)      { a.waiter = nil }

func (effPostChecklist) run(a *actor) {
	a.check = a.newChecklist("", a.view(nil, nil))
	a.check.postNow()
}

func (e effPostApproval) run(a *actor) {
	if ts := a.post(e.msg); ts != "" {
		a.apply(evApprovalShown{ts: ts})
	} else {
		a.apply(evApprovalUnseen{}) // the user cannot see the step
	}
}

func (e effUnreact) run(a *actor) {
	if e.ts != "" {
		a.b.api.Unreact(a.ctx, a.log, a.rec.Channel, e.ts, e.name)
	}
}

func (effCancelRun) run(a *actor) {
	if a.run != nil {
		a.run.cancel()
	}
	if a.prep != nil {
		a.prep.cancel()
	}
}

func (e effAnswerStep) run(a *actor) {
	if w := a.waiter; w != nil {
		a.waiter = nil
		w <- e.approved
	}
}

func (effCancelTodos) run(a *actor) {
	todos, err := a.b.cfg.Agent.CancelOpenTodos(a.b.bg, a.rec.ID)
	if errors.Is(err, store.ErrFenced) {
		a.drop("cancelling the todos was fenced")
		return
	}
	if err != nil {
		a.apply(evCancelFailed{words: err.Error()})
		return
	}
	a.apply(evTodosCancelled{todos: todos})
}

func (e effLog) run(a *actor) { a.log.Log(a.b.bg, e.level, e.msg, e.args...) }

func (effPrepare) run(a *actor)     { a.prepare() }
func (effRepoOutcome) run(a *actor) { a.repoOutcome() }
func (e effPush) run(a *actor)      { a.pushBranch(e) }

// String names each effect for the transition table (machine_table_test.go).
func (effSave) String() string           { return "save" }
func (effSaveForGate) String() string    { return "save for the run's gate" }
func (effRefresh) String() string        { return "refresh" }
func (e effSetTodos) String() string     { return "show " + planning.Summarize(e.todos).String() }
func (effFlushChecklist) String() string { return "flush the checklist" }
func (effPostChecklist) String() string  { return "post the checklist" }
func (e effPost) String() string {
	if e.kind != postNotice {
		return "post " + e.kind + " " + describe(e.msg)
	}
	return "post " + describe(e.msg)
}
func (effFinishPosts) String() string { return "finish the pending posts" }
func (e effPostApproval) String() string {
	return "post approval " + describe(e.msg)
}
func (e effPostEphemeral) String() string { return "ephemeral to " + e.user + ": " + e.text }
func (e effUpdate) String() string        { return "update " + e.ts + " " + describe(e.msg) }
func (e effReact) String() string         { return "react " + e.ts + " " + e.name }
func (e effUnreact) String() string       { return "unreact " + e.ts + " " + e.name }
func (e effStartRun) String() string {
	s := fmt.Sprintf("start %s (%s)", e.req.Intent, e.mode)
	if e.req.Text != "" {
		s += " " + e.req.Text
	}
	if e.budget > 0 {
		s += fmt.Sprintf(" within %d tokens", e.budget)
	}
	if e.gated {
		s += " gated"
	}
	return s
}
func (effCancelRun) String() string    { return "cancel the run" }
func (e effAnswerStep) String() string { return fmt.Sprintf("answer the step %t", e.approved) }
func (effForgetStep) String() string   { return "forget the step" }
func (effCancelTodos) String() string  { return "cancel the open todos" }
func (e effLog) String() string        { return "log " + e.msg }
func (effPrepare) String() string      { return "prepare the repository" }
func (effRepoOutcome) String() string  { return "post the outcome with the changes" }
func (e effPush) String() string {
	if e.pullRequest {
		return "push and open the pull request"
	}
	return "push the branch"
}

// describe names a message by its first block, or by its words when it
// has no blocks.
func describe(m render.Message) string {
	if len(m.Blocks) > 0 {
		return m.Blocks[0].ID()
	}
	return fmt.Sprintf("%q", render.Truncate(m.Text, 80))
}

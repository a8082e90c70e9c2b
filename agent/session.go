package agent

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// run is the state of one Run of one session.
type run struct {
	e     *Engine
	id    string
	ctx   context.Context // for store writes: not cancelled with the run
	opts  RunOptions
	mode  planning.PlanMode
	tools *toolset
	// closeTools releases the external tools of the run (nil: none).
	closeTools func()
	env        *toolEnv
	todos      *planning.TodoStore

	// msgs[0] is the system prompt, rebuilt every run and never stored;
	// msgs[1:saved] are in the store, msgs[saved:] are not yet.
	msgs  []Message
	saved int
	// askedLen is len(msgs) when the last request was sent: what came
	// after is not in the endpoint's last prompt count.
	askedLen int

	state         sessionState // the session's totals and work log, stored with each step
	runUsage      Usage        // this run's tokens
	compactFailed bool         // do not retry a failed compaction within the run
	req           ModelRequest
	text          answerText // the current answer's text as given out (EventTextDelta)

	// An accepted todo_write leaves its snapshot pending: the list is
	// stored with the step's commit (or before the step's next tool call),
	// and only then is EventTodos emitted, so a user never sees a list that
	// a crash could lose. todosStored: the run's last commit holds the
	// current list, so finish need not write it again.
	todosPending  bool
	todosSnap     []planning.TodoItem
	todosEvidence map[string]planning.Evidence
	todosStored   bool
}

// start decodes the loaded session and opens its workspace if there is
// one to read (see below). The returned run is usable for end() even on
// error. ctx is for store writes.
func (e *Engine) start(ctx context.Context, id string, sess store.AgentSession, todos *planning.TodoStore, opts RunOptions) (*run, error) {
	r := &run{e: e, id: id, ctx: ctx, opts: opts, todos: todos, mode: opts.Mode}
	history, err := decodeMessages(sess.Messages)
	if err != nil {
		return r, fmt.Errorf("loading session %s: %w", id, err)
	}
	if r.state, err = decodeState(sess.State); err != nil {
		return r, fmt.Errorf("loading session %s: %w", id, err)
	}
	wsm := e.cfg.Workspaces
	dir, err := wsm.Path(id)
	if err != nil {
		return r, fmt.Errorf("%w: session %s: %w", ErrWorkspace, id, err)
	}
	r.env = &toolEnv{sessionID: id, wsm: wsm, readOnly: r.mode == planning.PlanModePlan, todos: todos, share: opts.Share}
	if trackWork {
		// The log follows the stored list, whatever changed it since.
		r.state.Work.Track(todos.Read())
		r.env.work = &r.state.Work
	}
	// A workspace that exists, or that starts as the template's copy, is
	// opened now: the prompt reads AGENTS.md and skills from it, and a
	// failure ends the run at once. A new one without a template would be
	// empty, so the first tool that needs it creates it, off the first
	// request's path: making a directory cost up to 0.7 ms of CPU on the
	// benchmark machine, paid by every new session of a burst.
	if _, statErr := os.Lstat(dir); statErr == nil || wsm.Templated() {
		if err := r.env.openWorkspace(); err != nil {
			return r, fmt.Errorf("%w: session %s: %w", ErrWorkspace, id, err)
		}
	}
	skills := loadSkills(e.cfg.SkillsDir, dir)
	r.env.skills = skills
	sys := systemPrompt(promptInfo{
		WorkspaceDir: dir, Mode: r.mode, Sandbox: wsm.Level(), Skills: skills, AgentsMD: readAgentsMD(dir),
		Channel: opts.ChannelInstructions, Repository: isCheckout(dir),
	})
	r.msgs = make([]Message, 0, len(history)+32)
	r.msgs = append(r.msgs, systemMessage(sys))
	r.msgs = append(r.msgs, history...)
	r.saved, r.askedLen = len(r.msgs), len(r.msgs)
	var approve Approver
	if r.mode == planning.PlanModeAutoEdit {
		approve = opts.Approve
	}
	r.tools = newToolset(r.mode, approve)
	r.addExternalTools(ctx, approve)
	r.req = ModelRequest{Model: e.cfg.ModelName, Tools: r.tools.defs, User: id, OnText: r.onText, OnRetract: r.onRetract}
	return r, nil
}

// finish makes sure the todos are saved (on every path, like the Planning module's
// defer) and closes the workspace. The run's final commit normally holds
// them already; otherwise (a failed or missing final commit, a panic) they
// are written here. A snapshot still pending (only after a panic) is not
// emitted: EventError stays the run's last event.
func (r *run) finish() {
	if r.closeTools != nil {
		r.closeTools()
	}
	if !r.todosStored || r.todosPending {
		if err := r.saveTodos(); err != nil {
			r.e.log.Error("saving todos at run end", "session", r.id, "err", err)
		}
	}
	if err := r.env.close(); err != nil {
		r.e.log.Warn("closing workspace", "session", r.id, "err", err)
	}
}

func (r *run) emit(ev Event) {
	if r.opts.Events != nil {
		ev.SessionID = r.id
		r.opts.Events(ev)
	}
}

func (r *run) append(msgs ...Message) { r.msgs = append(r.msgs, msgs...) }

// persist appends the messages not yet stored, with the usage and the
// pending todos, in one transaction, then emits the pending todo snapshot.
// final (the run's last commit) stores the todos in any case: that is the
// run-end save, folded into the same commit.
func (r *run) persist(final bool) error {
	withTodos := r.todosPending || final
	if r.saved == len(r.msgs) && !r.todosPending {
		return nil
	}
	st, err := r.nextStep()
	if err == nil {
		if withTodos {
			items := r.todos.Read() // the live list: it keeps a concurrent CancelOpenTodos
			st.Todos = &items
		}
		err = storeError(r.e.store.AppendStep(r.ctx, r.id, st))
	}
	if err == nil {
		r.saved = len(r.msgs)
		if withTodos {
			r.todosPending, r.todosStored = false, true
		}
	}
	r.emitTodos()
	return err
}

// nextStep is the commit of the messages not yet stored, with the state.
func (r *run) nextStep() (store.Step, error) {
	msgs, err := encodeMessages(r.msgs[r.saved:])
	if err != nil {
		return store.Step{}, err
	}
	state, err := encodeState(r.state)
	return store.Step{First: r.saved - 1, Messages: msgs, State: state}, err
}

// replaceHistory stores the compacted conversation and the state in one commit.
func (r *run) replaceHistory(msgs []Message, u sessionState) error {
	enc, err := encodeMessages(msgs)
	if err != nil {
		return err
	}
	state, err := encodeState(u)
	if err != nil {
		return err
	}
	return storeError(r.e.store.ReplaceHistory(r.ctx, r.id, enc, state))
}

// saveTodos commits the live todo list with the state (its work log and
// evidence belong with it) and none of the messages not yet stored.
func (r *run) saveTodos() error {
	state, err := encodeState(r.state)
	if err != nil {
		return err
	}
	items := r.todos.Read()
	return storeError(r.e.store.AppendStep(r.ctx, r.id, store.Step{First: r.saved - 1, Todos: &items, State: state}))
}

// flushTodos stores a pending todo list on its own commit and emits it:
// used when the step has more tool calls to run, so the checklist does not
// wait for them (a todo_write then a long bash shows in_progress at once).
func (r *run) flushTodos() {
	if !r.todosPending {
		return
	}
	if err := r.saveTodos(); err != nil {
		r.e.log.Warn("saving todos", "session", r.id, "err", err) // still pending: the step's commit retries
	} else {
		r.todosPending, r.todosStored = false, true
	}
	r.emitTodos()
}

// emitTodos sends the snapshot of the last accepted todo_write once its
// save was attempted. A failed save still shows it: the list is live in
// memory and the run's end saves it again, as before this was batched.
func (r *run) emitTodos() {
	if r.todosSnap == nil {
		return
	}
	snap, evidence := r.todosSnap, r.todosEvidence
	r.todosSnap, r.todosEvidence = nil, nil
	r.emit(Event{Kind: EventTodos, Todos: snap, Evidence: evidence})
}

func (r *run) result(text string) Result {
	return Result{Text: text, Usage: r.runUsage, Total: r.state.Total, Mode: r.mode, Todos: r.todos.Read(), Evidence: r.state.Work.Evidence()}
}

// end emits the run's last event and returns the run's error as a
// *RunError (nil when it succeeded).
func (r *run) end(text string, err error) error {
	if err == nil {
		r.emit(Event{Kind: EventDone, Text: text, Answer: r.text.number, Usage: r.runUsage, Total: r.state.Total})
		return nil
	}
	r.e.log.Warn("agent run failed", "session", r.id, "err", err)
	words := failureText(err, r.e.cfg.MaxSteps)
	r.emit(Event{Kind: EventError, Text: words, Err: err, Usage: r.runUsage, Total: r.state.Total})
	return &RunError{Text: words, Err: err}
}

// failureText is what the user reads about a failed run.
func failureText(err error, maxSteps int) string {
	var cut *cutError
	switch {
	case errors.Is(err, ErrCancelled):
		return "Cancelled."
	case errors.Is(err, ErrStepLimit):
		return fmt.Sprintf("Stopped after %d steps without a final answer (the step limit). Reply to let it continue.", maxSteps)
	case errors.As(err, &cut):
		return cut.text()
	case errors.Is(err, ErrModel):
		return openai.DescribeError(err)
	case errors.Is(err, ErrWorkspace):
		return "h9 could not open this thread's workspace."
	case errors.Is(err, ErrStore):
		return "h9 could not read or save this session's data."
	case errors.Is(err, ErrBusy):
		return "This session is already running."
	case errors.Is(err, ErrBudget):
		return "Stopped: this session has used more tokens than its budget allows."
	}
	return "h9 failed unexpectedly; the error is in the logs."
}

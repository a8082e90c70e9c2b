package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/h9-app/h9/planning"
)

// RunOptions are a run's mode and hooks.
type RunOptions struct {
	// Mode is the mode the run uses for its whole life (the Planning module's
	// snapshot at the start of a run). The caller owns each session's
	// mode and passes it with every run; the agent does not store it.
	Mode planning.PlanMode
	// Events is called synchronously, in order, from the run's goroutine;
	// it must not block long. nil drops events.
	Events func(Event)
	// Approve is used only in auto-edit mode; nil there approves everything.
	Approve Approver
	// Gate, when set, is called once, after the run has loaded the session
	// and built its prompt and before its first model request; an error
	// stops the run there. A caller passes the wait for its own record of
	// the run to be stored: once the model has the request, a crash must
	// find the session to resume, and the commit overlaps the run's start.
	Gate func() error
	// TokenBudget is the session's token budget (0: none), owned by the
	// caller like the mode. While the session's total is greater than it,
	// the run asks the model nothing more: it ends after the step in
	// progress with ErrBudget, or at once with ErrOverBudget.
	TokenBudget int
	// Checkpoint, when set, records a completed todo's changes (see
	// Checkpointer).
	Checkpoint Checkpointer
	// Files are the files shared with a task or reply request, already in
	// the workspace: the prompt names them, and images among them go to a
	// model that sees images (vision.go). Other intents ignore them.
	Files []Attachment
	// Share uploads share_file's files into the session's thread; nil:
	// the tool says files cannot be shared.
	Share FileSharer
	// ChannelInstructions are the instructions of the session's Slack
	// channel (/h9 instructions): the system prompt gives them after
	// AGENTS.md, marked as the channel's.
	ChannelInstructions string
	// Channel and Repo are where the session lives, for Config.Tools to
	// narrow the external tools it offers ("" when none or unknown).
	Channel, Repo string
	// Durable parents the run's store writes, which outlive ctx (a stopped
	// run keeps what it did) but not Durable: the caller's last resort at
	// shutdown. nil = ctx without its cancellation.
	Durable context.Context
}

// Result is the outcome of a run.
type Result struct {
	Text  string              // the final answer
	Usage Usage               // tokens used by this run
	Total Usage               // the session's tokens over all its runs, this one included
	Mode  planning.PlanMode   // the mode the run used
	Todos []planning.TodoItem // the todo list at the end
	// Evidence is what h9 saw done for each completed todo, by id.
	Evidence map[string]planning.Evidence
}

// Run sends the request's prompt to the session's agent and loops until
// the model answers without tool calls, the step limit, or ctx ends; todos
// are saved on every path. A failed run returns a *RunError, whose Text
// (also sent as EventError) is for users; tool mistakes are not failures.
func (e *Engine) Run(ctx context.Context, sessionID string, req Request, opts RunOptions) (res Result, err error) {
	intent, started := intentLabel(req.Intent), time.Now()
	e.metrics.RunStarted(intent)
	defer func() { e.metrics.RunEnded(intent, runOutcome(err), time.Since(started)) }() // after the recover below
	prompt, err := req.prompt(opts.Files)
	prompt += req.Network.note()
	if err == nil && !opts.Mode.Valid() {
		err = fmt.Errorf("%w: %d", ErrInvalidMode, int(opts.Mode))
	}
	if err != nil {
		return Result{}, &RunError{Text: "h9 asked the agent for something it does not know.", Err: err}
	}
	// Store writes outlive a cancelled run: a stopped run keeps what it did.
	storeCtx := opts.Durable
	if storeCtx == nil {
		storeCtx = context.WithoutCancel(ctx)
	}
	sess, todos, err := e.acquire(storeCtx, sessionID)
	if err != nil {
		return Result{}, &RunError{Text: failureText(err, e.cfg.MaxSteps), Err: err}
	}
	defer e.release(sessionID)
	r, err := e.start(storeCtx, sessionID, sess, todos, opts)
	if err != nil {
		return r.result(""), r.end("", err)
	}
	defer r.finish() // the Planning module's defer: todos are saved whatever happens
	defer func() {
		if p := recover(); p != nil {
			err = r.end("", fmt.Errorf("agent panic in session %s: %v", sessionID, p))
		}
	}()
	text, err := r.loop(ctx, req.Intent, prompt)
	return r.result(text), r.end(text, err)
}

// loop is the ReAct loop: ask the model, run its tool calls, repeat.
func (r *run) loop(ctx context.Context, intent Intent, prompt string) (string, error) {
	r.emit(Event{Kind: EventRunStarted, Mode: r.mode, Total: r.state.Total})
	if r.overBudget() {
		return "", r.budgetError(ErrOverBudget) // nothing happened, so nothing to store
	}
	if intent != IntentProceed || !awaitsAnswer(r.msgs) {
		r.append(r.withImages(userMessage(planPrompt(r.mode, prompt))))
	}
	if gate := r.opts.Gate; gate != nil {
		if err := gate(); err != nil {
			return "", err // nothing happened yet, so nothing to store
		}
	}
	for range r.e.cfg.MaxSteps {
		if ctx.Err() != nil {
			return "", r.persistAnd(fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx)))
		}
		if r.overBudget() {
			return "", r.persistAnd(r.budgetError(ErrBudget))
		}
		r.maybeCompact(ctx)
		ans, err := r.ask(ctx)
		if err != nil {
			return "", r.persistAnd(err)
		}
		sent := storableArguments(&ans)
		reply := ans.Message
		r.append(reply)
		if len(reply.ToolCalls) == 0 {
			text, err := finalText(ans)
			r.settle(text)
			return text, r.persistAnd(err)
		}
		r.settle(reply.Content)
		if reply.Content != "" {
			r.emit(Event{Kind: EventText, Text: reply.Content, Answer: r.text.number})
		}
		r.append(r.runTools(ctx, reply.ToolCalls, sent)...)
		if err := r.persist(false); err != nil {
			return "", err
		}
	}
	return "", r.persistAnd(fmt.Errorf("%w: %d steps", ErrStepLimit, r.e.cfg.MaxSteps))
}

// persistAnd makes the run's final commit and returns err (or the save's error).
func (r *run) persistAnd(err error) error {
	return errors.Join(err, r.persist(true))
}

// overBudget: the session's total is past the budget the caller gave.
func (r *run) overBudget() bool {
	b := r.opts.TokenBudget
	return b > 0 && r.state.Total.TotalTokens > b
}

func (r *run) budgetError(sentinel error) error {
	return fmt.Errorf("%w: session %s used %d tokens, its budget is %d", sentinel, r.id, r.state.Total.TotalTokens, r.opts.TokenBudget)
}

// awaitsAnswer reports whether a history (after the system prompt) ends
// with something for the model to answer: a tool result or a user message.
// A run that goes on from it as it is needs no new prompt.
func awaitsAnswer(msgs []Message) bool {
	if len(msgs) < 2 {
		return false
	}
	role := msgs[len(msgs)-1].Role
	return role == RoleTool || role == RoleUser
}

package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/h9-app/h9/planning"
)

// RunOptions are per-run hooks.
type RunOptions struct {
	// Events is called synchronously, in order, from the run's goroutine;
	// it must not block long. nil drops events.
	Events func(Event)
	// Approve is used only in auto-edit mode; nil there approves everything.
	Approve Approver
	// Mode, when set, is the mode the run uses instead of the stored one;
	// it becomes the session's stored mode with the run's first commit.
	// A caller that keeps its own record of the mode passes it on every
	// run and need not wait for SetPlanMode first.
	Mode *planning.PlanMode
	// Gate, when set, is called once, after the run has loaded the session
	// and built its prompt and before its first model request; an error
	// stops the run there. A caller passes the wait for its own record of
	// the run to be stored: once the model has the request, a crash must
	// find the session to resume, and the commit overlaps the run's start.
	Gate func() error
}

// Result is the outcome of a run.
type Result struct {
	Text  string              // the final answer
	Usage Usage               // tokens used by this run
	Mode  planning.PlanMode   // the mode the run used
	Todos []planning.TodoItem // the todo list at the end
}

// Run sends prompt to the session's agent and loops until the model
// answers without tool calls, the step limit, or ctx ends. The mode is
// snapshotted at start; todos are saved on every path. A failed run returns
// an error (also sent as EventError); tool mistakes are not failures.
func (e *Engine) Run(ctx context.Context, sessionID, prompt string, opts RunOptions) (res Result, err error) {
	todos, err := e.acquire(sessionID)
	if err != nil {
		return Result{}, err
	}
	defer e.release(sessionID)
	r, err := e.start(ctx, sessionID, todos, opts)
	if err != nil {
		r.end("", err)
		return r.result(""), err
	}
	defer r.finish() // the seed's defer: todos are saved whatever happens
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent panic in session %s: %v", sessionID, p)
			r.end("", err)
		}
	}()
	text, err := r.loop(ctx, prompt)
	r.end(text, err)
	return r.result(text), err
}

// loop is the ReAct loop: ask the model, run its tool calls, repeat.
func (r *run) loop(ctx context.Context, prompt string) (string, error) {
	r.emit(Event{Kind: EventRunStarted, Mode: r.mode})
	r.append(userMessage(planPrompt(r.mode, prompt)))
	if gate := r.opts.Gate; gate != nil {
		if err := gate(); err != nil {
			return "", err // nothing happened yet, so nothing to store
		}
	}
	for range r.e.cfg.MaxSteps {
		if ctx.Err() != nil {
			return "", r.persistAnd(fmt.Errorf("%w: %v", ErrCancelled, context.Cause(ctx)))
		}
		r.maybeCompact(ctx)
		reply, err := r.ask(ctx)
		if err != nil {
			return "", r.persistAnd(err)
		}
		r.append(reply)
		if len(reply.ToolCalls) == 0 {
			return reply.Content, r.persist(true)
		}
		if reply.Content != "" {
			r.emit(Event{Kind: EventText, Text: reply.Content})
		}
		r.append(r.runTools(ctx, reply.ToolCalls)...)
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

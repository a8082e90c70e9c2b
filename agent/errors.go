package agent

import (
	"errors"
	"fmt"

	"github.com/h9-app/h9/agent/openai"
)

// Sentinel errors. Run wraps them with the session and cause in a
// *RunError, which also carries the words for users; match with errors.Is.
var (
	// ErrInvalidConfig: New was given a Config missing a required field,
	// or openai.New a base URL it cannot use.
	ErrInvalidConfig = openai.ErrInvalidConfig
	// ErrBusy: Run was called for a session that is already running.
	ErrBusy = errors.New("session is already running")
	// ErrStepLimit: the model kept calling tools past Config.MaxSteps.
	ErrStepLimit = errors.New("step limit reached")
	// ErrCancelled: the run's context was cancelled.
	ErrCancelled = errors.New("run cancelled")
	// ErrModel: the model endpoint failed after retries or answered
	// something unusable.
	ErrModel = openai.ErrModel
	// ErrEmptyReply: the endpoint answered with neither text nor tool
	// calls, twice; the answer was not stored.
	ErrEmptyReply = openai.ErrEmptyReply
	// ErrAnswerCut: the final answer was stopped before its end, at the
	// model's output limit (finish_reason "length") or by a content filter.
	// It is stored and is the run's Result.Text, but incomplete.
	ErrAnswerCut = errors.New("answer cut off")
	// ErrStore: reading or writing the session store failed (the store's
	// own sentinel, from agent/store, is wrapped too).
	ErrStore = errors.New("session store failed")
	// ErrWorkspace: the session's workspace could not be opened.
	ErrWorkspace = errors.New("workspace unavailable")
	// ErrInvalidMode: a run was given an undefined mode.
	ErrInvalidMode = errors.New("invalid plan mode")
	// ErrInvalidRequest: a run was given no intent, an unknown one, or no
	// text for an intent that needs it.
	ErrInvalidRequest = errors.New("invalid run request")
	// ErrBudget: the session's tokens went past RunOptions.TokenBudget;
	// the run stopped after its step, before asking the model again, and
	// IntentProceed goes on from there.
	ErrBudget = errors.New("token budget exceeded")
	// ErrOverBudget wraps ErrBudget: the session was already over its
	// budget when the run began, so it did nothing (the same request can
	// be made again once the budget is raised).
	ErrOverBudget = fmt.Errorf("%w before the run began", ErrBudget)
)

// RunError is every failure Run returns: Text is what a user should read
// about it (the same words as EventError.Text), Err the cause for logs
// and errors.Is.
type RunError struct {
	Text string
	Err  error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

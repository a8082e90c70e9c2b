package agent

import "errors"

// Sentinel errors. Run wraps them with the session and cause; match with
// errors.Is. The user-facing words travel in EventError.Text.
var (
	// ErrInvalidConfig: New was given a Config missing a required field.
	ErrInvalidConfig = errors.New("invalid agent config")
	// ErrBusy: Run was called for a session that is already running.
	ErrBusy = errors.New("session is already running")
	// ErrStepLimit: the model kept calling tools past Config.MaxSteps.
	ErrStepLimit = errors.New("step limit reached")
	// ErrCancelled: the run's context was cancelled.
	ErrCancelled = errors.New("run cancelled")
	// ErrModel: the model endpoint failed after retries or answered
	// something unusable.
	ErrModel = errors.New("model request failed")
	// ErrEmptyReply: the endpoint answered 200 with no choices.
	ErrEmptyReply = errors.New("model returned no choices")
	// ErrStore: reading or writing the session store failed.
	ErrStore = errors.New("session store failed")
	// ErrWorkspace: the session's workspace could not be opened.
	ErrWorkspace = errors.New("workspace unavailable")
	// ErrInvalidMode: SetPlanMode was given an undefined mode.
	ErrInvalidMode = errors.New("invalid plan mode")
)

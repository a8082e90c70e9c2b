package openai

import "errors"

// Sentinel errors; agent's errors of the same names are these.
var (
	// ErrInvalidConfig: New was given a base URL it cannot use.
	ErrInvalidConfig = errors.New("invalid agent config")
	// ErrModel: the model endpoint failed after retries or answered
	// something unusable.
	ErrModel = errors.New("model request failed")
	// ErrEmptyReply: the endpoint answered with neither text nor tool
	// calls, twice; the answer was not stored.
	ErrEmptyReply = errors.New("model returned an empty answer")
)

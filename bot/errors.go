package bot

import "errors"

// Sentinel errors. New wraps the config ones with the field at fault; match
// with errors.Is.
var (
	// ErrInvalidConfig: New was given a Config missing a required field or
	// with a malformed one.
	ErrInvalidConfig = errors.New("invalid bot config")
	// ErrStore: reading or writing the bot's bbolt buckets failed.
	ErrStore = errors.New("bot store failed")
)

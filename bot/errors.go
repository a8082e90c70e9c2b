package bot

import "errors"

// Sentinel errors. New wraps the config ones with the field at fault; match
// with errors.Is.
var (
	// ErrInvalidConfig: New was given a Config missing a required field or
	// with a malformed one.
	ErrInvalidConfig = errors.New("invalid bot config")
	// ErrStore: reading or writing the bot's records failed, or one does
	// not decode.
	ErrStore = errors.New("bot store failed")
	// ErrUnknownState: a session record holds a state this h9 does not know
	// (a newer h9 wrote it). The session is left alone: nothing acts on it
	// or writes it, and the rest goes on.
	ErrUnknownState = errors.New("session state unknown to this h9")
	// ErrBotTokenRefused: Slack refused the bot token at start (auth.test).
	ErrBotTokenRefused = errors.New("the bot token was refused")

	// errNoRepos: a session has a repository but h9 now has none configured.
	errNoRepos = errors.New("h9 has no repositories configured any more")
	// errDiffTooLarge: a session's diff is past what h9 uploads.
	errDiffTooLarge = errors.New("diff too large")
)

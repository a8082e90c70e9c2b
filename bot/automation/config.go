// Package automation starts h9's sessions by themselves (ARCHITECTURE.md,
// "Automations"): it reads the operator's H9_AUTOMATIONS_FILE and each
// repository's .h9/automations.yaml, computes schedules, verifies webhooks,
// matches messages, renders templates and fences the data a trigger
// carries, and runs the engine that records every occurrence in the store
// before anything is posted, so that in a fleet each starts one session.
//
// What only the bot can do (post in Slack, start a session, know whether
// a thread's session is open) it asks through Bot; what only a forge can
// tell, through Forge. Both are small interfaces declared here.
package automation

import (
	"errors"
	"fmt"
	"time"
)

// Config is the automations' settings (cmd/h9 reads them from the
// environment).
type Config struct {
	// File is H9_AUTOMATIONS_FILE, the operator's definitions ("" = none).
	File string
	// MinInterval is H9_AUTOMATION_MIN_INTERVAL: a schedule whose
	// occurrences come closer than this is refused (default 1h, at least 1m).
	MinInterval time.Duration
	// Refresh is H9_AUTOMATION_REFRESH: how often a repository's file is
	// read again at the least (default 10m, at least 10s).
	Refresh time.Duration
}

// Defaults and floors of the settings.
const (
	DefaultMinInterval = time.Hour
	FloorMinInterval   = time.Minute
	DefaultRefresh     = 10 * time.Minute
	FloorRefresh       = 10 * time.Second
)

// ErrInvalid marks a definition, a setting or a request that cannot be
// used; the message says what and where.
var ErrInvalid = errors.New("invalid automation")

// WithDefaults fills the settings left zero.
func (c Config) WithDefaults() Config {
	if c.MinInterval == 0 {
		c.MinInterval = DefaultMinInterval
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh
	}
	return c
}

// Check refuses settings below their floors, naming the variable.
func (c Config) Check() error {
	switch {
	case c.MinInterval < FloorMinInterval:
		return fmt.Errorf("%w: H9_AUTOMATION_MIN_INTERVAL is %s: it must be at least %s", ErrInvalid, c.MinInterval, FloorMinInterval)
	case c.Refresh < FloorRefresh:
		return fmt.Errorf("%w: H9_AUTOMATION_REFRESH is %s: it must be at least %s", ErrInvalid, c.Refresh, FloorRefresh)
	}
	return nil
}

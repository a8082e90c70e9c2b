package main

import (
	"errors"
	"fmt"
)

var (
	// ErrMissingSetting: a required environment variable is unset or empty.
	ErrMissingSetting = errors.New("missing setting")
	// ErrInvalidSetting: an environment variable has a value h9 cannot use.
	ErrInvalidSetting = errors.New("invalid setting")
	// ErrDataDirLocked: another process (usually another h9) holds the lock on h9.db.
	ErrDataDirLocked = errors.New("data directory locked")
	// ErrUsage: the command line names no known command.
	ErrUsage = errors.New("usage")
	// ErrDoctorFailed: at least one `h9 doctor` check failed.
	ErrDoctorFailed = errors.New("doctor: a check failed")
)

// lineError is a one-line message for the operator that still matches a sentinel with errors.Is;
// the sentinel's own text is left out so the line reads naturally.
type lineError struct {
	kind error
	msg  string
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.kind }

func lineErrorf(kind error, format string, args ...any) error {
	return &lineError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func missing(name string) error { return lineErrorf(ErrMissingSetting, "%s is required", name) }

func invalid(format string, args ...any) error { return lineErrorf(ErrInvalidSetting, format, args...) }

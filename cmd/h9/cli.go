package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // something went wrong while running (or a doctor check failed)
	exitConfig  = 2 // bad command line or configuration: fix it and start again
)

// realMain is main without os.Exit, so tests can call it.
func realMain(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case len(args) > 1:
		return fail(stderr, lineErrorf(ErrUsage, "unexpected argument %q", args[1]))
	case cmd == "version":
		return fail(stderr, printVersion(stdout))
	case cmd == "config":
		return fail(stderr, printConfig(stdout, stderr))
	case cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help":
		if err := printUsage(stdout); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	case cmd != "" && cmd != "doctor":
		return fail(stderr, lineErrorf(ErrUsage, "unknown command %q", cmd))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, restore the default handling: a second Ctrl-C kills a stuck shutdown.
	go func() { <-ctx.Done(); stop() }()
	if cmd == "doctor" {
		// doctor reports configuration problems as a failed check, so it loads the config itself.
		return fail(stderr, runDoctor(ctx, stdout))
	}
	cfg, err := loadConfig()
	if err != nil {
		return fail(stderr, err)
	}
	dropSecretEnv() // the config holds them now; no child process inherits them
	return fail(stderr, run(ctx, cfg, stderr))
}

// fail prints err as one line and maps it to an exit code.
func fail(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, ErrDoctorFailed):
		return exitFailure // doctor already printed its findings
	case errors.Is(err, ErrMissingSetting), errors.Is(err, ErrInvalidSetting), errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "h9: %v (see h9 -h)\n", err)
		return exitConfig
	default:
		fmt.Fprintf(stderr, "h9: %v\n", err)
		return exitFailure
	}
}

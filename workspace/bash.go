package workspace

import (
	"context"
	"fmt"
	"strings"
	"time"
)

const (
	// DefaultBashTimeout applies when BashOptions.Timeout is 0.
	DefaultBashTimeout = 120 * time.Second
	// MaxBashTimeout caps any requested timeout.
	MaxBashTimeout = 600 * time.Second
)

// BashOptions tune one bash call.
type BashOptions struct {
	Timeout  time.Duration // 0 = DefaultBashTimeout, capped at MaxBashTimeout
	ReadOnly bool          // plan mode
}

// BashResult is what a command did. Non-zero exits and timeouts are results,
// not errors.
type BashResult struct {
	Output    string // combined stdout+stderr, capped at MaxOutputChars (head and tail kept)
	ExitCode  int    // 128+signal when killed
	TimedOut  bool
	Cancelled bool
	Timeout   time.Duration // the limit that applied
	Duration  time.Duration // wall time of the call
}

// String is the text the model reads: the output, then the outcome.
func (r BashResult) String() string {
	var b strings.Builder
	if r.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s]", r.Timeout)
	case r.Cancelled:
		b.WriteString("[cancelled]")
	default:
		fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	}
	return b.String()
}

// Bash runs `bash -c command` in the workspace: stdin is /dev/null, the
// environment is an allowlist, and under bwrap the sandbox of ARCHITECTURE.md
// applies. In plan mode the workspace is mounted read-only under bwrap;
// unsandboxed, only commands CheckReadOnly accepts run. The error is non-nil
// only when the command could not run at all or plan mode refused it.
func (w *Workspace) Bash(ctx context.Context, command string, opts BashOptions) (BashResult, error) {
	if w.isClosed() {
		return BashResult{}, ErrClosed
	}
	if strings.TrimSpace(command) == "" {
		return BashResult{}, fmt.Errorf("%w: command is empty", ErrInvalidArgument)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	timeout = min(timeout, MaxBashTimeout)
	if opts.ReadOnly && w.sandbox.level != LevelBwrap {
		if err := CheckReadOnly(command); err != nil {
			return BashResult{}, err
		}
	}
	res := BashResult{Timeout: timeout}
	if ctx.Err() != nil {
		res.Cancelled = true
		return res, nil
	}
	out := newHeadTail(MaxOutputChars)
	start := time.Now()
	oc, err := runGroup(ctx, w.sandbox.command(w.dir, command, opts.ReadOnly), timeout, out)
	if err != nil {
		return BashResult{}, fmt.Errorf("starting bash: %w", err)
	}
	res.Duration = time.Since(start)
	res.Output = out.String()
	res.ExitCode = exitCode(oc.state)
	res.TimedOut, res.Cancelled = oc.timedOut, oc.cancelled
	return res, nil
}

func (w *Workspace) isClosed() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.closed
}

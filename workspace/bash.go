package workspace

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/h9-app/h9/workspace/readonly"
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
	// Network shares the host's network with the command, for a
	// repository's setup command; nothing else of the sandbox changes, and
	// no secret is in its environment. Refused in plan mode. Without bwrap
	// commands have the host's network anyway.
	Network bool
	// Stdout, when set, takes the command's standard output, byte for
	// byte and unbounded (the caller bounds it); Output then holds only
	// its standard error. This is how h9 receives data from a sandboxed
	// command without a file the command could swap.
	Stdout io.Writer
	// SetupEnv are a repository's secrets, for its setup command (Network
	// set) only; refused otherwise (secrets.go).
	SetupEnv []Secret
}

// BashResult is what a command did. Non-zero exits and timeouts are results,
// not errors.
type BashResult struct {
	Output    string // combined stdout+stderr, capped at MaxOutputChars (head and tail kept)
	ExitCode  int    // 128+signal when killed
	TimedOut  bool
	Cancelled bool
	Notes     []string      // the limits the command ran into, named for the model
	Timeout   time.Duration // the limit that applied
	Duration  time.Duration // wall time of the call
}

// String is the text the model reads: the output, the limits hit, then the
// outcome.
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
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "[%s]\n", n)
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
// environment is an allowlist, the limits apply, and every process the
// command started is gone when Bash returns. Under bwrap the sandbox of
// ARCHITECTURE.md applies; in plan mode the workspace is read-only by the
// kernel (bwrap's read-only bind, else Landlock) and, without bwrap, only
// commands readonly.Check accepts run. The error is non-nil only when the
// command could not run at all or plan mode refused it.
func (w *Workspace) Bash(ctx context.Context, command string, opts BashOptions) (BashResult, error) {
	if w.isClosed() {
		return BashResult{}, ErrClosed
	}
	if err := checkCommand(command); err != nil {
		return BashResult{}, err
	}
	if opts.ReadOnly && opts.Network {
		return BashResult{}, fmt.Errorf("%w: plan mode has no network", ErrInvalidArgument)
	}
	if opts.ReadOnly && w.sandbox.level != LevelBwrap {
		if err := readonly.Check(command); err != nil {
			return BashResult{}, err
		}
	}
	return w.run(ctx, command, opts)
}

// checkCommand refuses what no process could be started with.
func checkCommand(command string) error {
	switch {
	case strings.TrimSpace(command) == "":
		return fmt.Errorf("%w: command is empty", ErrInvalidArgument)
	case strings.ContainsRune(command, 0):
		return fmt.Errorf("%w: command contains a NUL byte", ErrInvalidArgument)
	}
	return nil
}

// run is Bash after the checks: the kernel's part alone.
func (w *Workspace) run(ctx context.Context, command string, opts BashOptions) (BashResult, error) {
	return w.runUnder(ctx, w.sandbox, command, opts)
}

func (w *Workspace) runUnder(ctx context.Context, sb sandbox, command string, opts BashOptions) (BashResult, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	res := BashResult{Timeout: min(timeout, MaxBashTimeout)}
	if ctx.Err() != nil {
		res.Cancelled = true
		return res, nil
	}
	extra, err := setupEnv(opts)
	if err != nil {
		return BashResult{}, err
	}
	egress, done, err := w.route(command, opts)
	if err != nil {
		return BashResult{}, err
	}
	defer done()
	out := newHeadTail(MaxOutputChars)
	start := time.Now()
	p := place{dir: w.dir, home: w.home, readOnly: opts.ReadOnly, network: opts.Network, egress: egress, env: extra, cache: sb.cacheFor(w.cache)}
	oc, err := sb.run(ctx, p, command, res.Timeout, out, opts.Stdout)
	if err != nil {
		return BashResult{}, fmt.Errorf("running bash: %w", err)
	}
	res.Duration = time.Since(start)
	res.Output = scrubSecrets(out.String(), w.sandbox.secrets)
	res.ExitCode = exitCode(oc.state)
	res.TimedOut, res.Cancelled = oc.timedOut, oc.cancelled
	res.Notes = sb.limitNotes(oc, res.ExitCode, res.Output, w.dir)
	return res, nil
}

func (w *Workspace) isClosed() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.closed
}

// MaxOutputChars caps bash output; the head and the tail are kept because
// errors tend to be at the end and context at the start. With the cut note and
// the exit line it stays under the agent's 30 000-byte cap on a tool result,
// so the output is cut once and the note's count is right.
const MaxOutputChars = 28_000

// headTail keeps the first and last half of everything written to it.
type headTail struct {
	head  []byte
	tail  []byte // ring buffer once full
	start int    // ring start within tail
	total int
	half  int
}

func newHeadTail(limit int) *headTail { return &headTail{half: limit / 2} }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += n
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= h.half {
			p = p[len(p)-h.half:]
			copy(h.tail, p)
			h.start = 0
			return n, nil
		}
		k := copy(h.tail[h.start:], p)
		copy(h.tail, p[k:])
		h.start = (h.start + len(p)) % h.half
		p = nil
	}
	return n, nil
}

// String joins head and tail, with a marker saying how much was cut.
func (h *headTail) String() string {
	tail := append(append([]byte(nil), h.tail[h.start:]...), h.tail[:h.start]...)
	cut := h.total - len(h.head) - len(tail)
	if cut <= 0 {
		return string(h.head) + string(tail)
	}
	head := trimToRune(h.head)
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	cut = h.total - len(head) - len(tail)
	return fmt.Sprintf("%s\n… [%d bytes of output cut; showing the first %d and last %d] …\n%s", head, cut, len(head), len(tail), tail)
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/h9-app/h9/workspace"
)

// status is the stdio server as doctor reports it: started once (open
// given) with its tool count or why it failed, then its lifetime in
// sessions and the processes running now.
func (st *stdio) status(ctx context.Context, wait time.Duration, open func() (*workspace.Workspace, error)) (bool, string) {
	line := fmt.Sprintf("stdio server %q", st.s.cfg.Command)
	if open != nil {
		n, err := st.probe(ctx, wait, open)
		var absent notInWorkspace
		switch {
		case errors.As(err, &absent):
			line += fmt.Sprintf(", not started: %s", absent)
		case err != nil:
			// start's errors name the command, which the line has named
			why := strings.TrimPrefix(err.Error(), fmt.Sprintf("%q ", st.s.cfg.Command))
			return false, line + fmt.Sprintf(": %s (h9 starts anyway; sessions try it again)", st.s.m.scrub.String(why))
		default:
			line += fmt.Sprintf(", %d %s", n, plural(n, "tool", "tools"))
		}
	}
	line += fmt.Sprintf("; started in each session's sandbox on first use and stopped once the session is idle for %s", st.s.m.opts.StdioIdle)
	n, listed, running := st.state()
	if listed && open == nil {
		line += fmt.Sprintf(", %d %s", n, plural(n, "tool", "tools"))
	}
	if listed || running > 0 {
		line += fmt.Sprintf(", running for %d %s", running, plural(running, "session", "sessions"))
	}
	return true, line
}

// probe starts the server once in a workspace from open, as a session
// would (execution mode), lists its tools and stops it, all within wait;
// the workspace is closed after the process is gone.
func (st *stdio) probe(ctx context.Context, wait time.Duration, open func() (*workspace.Workspace, error)) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ws, err := open()
	if err != nil {
		return 0, fmt.Errorf("no workspace to start it in: %w", err)
	}
	defer ws.Close()
	if err := inWorkspace(ws.Dir(), st.s.cfg.Command); err != nil {
		return 0, err
	}
	c, err := st.start(ctx, Scope{Workspace: func() (*workspace.Workspace, error) { return ws, nil }}, false)
	if err != nil {
		return 0, within(ctx, wait, err)
	}
	defer c.stop()
	tools, err := listTools(ctx, c.sess)
	if err != nil {
		return 0, fmt.Errorf("listing its tools: %w (stderr: %s)", within(ctx, wait, err), stderrTail(c.proc.Stderr()))
	}
	return len(st.s.buildOffers(tools)), nil
}

// stderrTail is the end of a server's stderr on one line, at most 300
// bytes: what it said last is most often why it stopped.
func stderrTail(s string) string {
	s = oneLine(s)
	if len(s) <= 300 {
		return s
	}
	s = s[len(s)-300:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return "…" + s
}

// within names doctor's deadline when it is what ended err.
func within(ctx context.Context, wait time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", wait, err)
	}
	return err
}

// notInWorkspace: the command is a file of the session's workspace (a
// repository's, or the template's) that doctor's empty one lacks, so
// starting it there would say nothing about a session.
type notInWorkspace string

func (n notInWorkspace) Error() string {
	return fmt.Sprintf("%s is a path in the session's workspace (a repository's file), which doctor's workspace does not have", string(n))
}

// inWorkspace is notInWorkspace when the command's program is a relative
// path (./tools/docs-mcp) missing from dir.
func inWorkspace(dir, command string) error {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return nil
	}
	prog := fields[0]
	if !strings.HasPrefix(prog, "./") {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, prog)); errors.Is(err, os.ErrNotExist) {
		return notInWorkspace(prog)
	}
	return nil
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdio is one stdio server: a process per session, started in the
// session's sandbox on first use and kept across the session's runs until
// the session is idle (lifetime.go); its tool list is shared by every
// session (the same command gives the same tools), listed again when a
// process says it changed.
type stdio struct {
	s *server

	mu       sync.Mutex
	offers   []offer
	listed   bool // offers holds a listing, not yet outdated
	sessions map[string]*stdioSession
}

// stdioRetry is how long a session's runs go without a stdio server that
// failed to start for it, rather than each waiting for it to fail again
// (a server that never answers costs connectTimeout).
const stdioRetry = time.Minute

// stdioSession is one session's use of the server.
type stdioSession struct {
	conn     *stdioConn // nil: not started, or stopped
	runs     int        // runs of the session using the server now
	last     time.Time  // when the last of them ended
	failedAt time.Time  // when starting it to list its tools last failed
}

// mayStart: no start to list the tools failed for the session lately.
func (st *stdio) mayStart(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return time.Since(st.session(id).failedAt) >= stdioRetry
}

func (st *stdio) failed(id string) {
	st.mu.Lock()
	st.session(id).failedAt = time.Now()
	st.mu.Unlock()
}

type stdioConn struct {
	proc     *workspace.StdioProcess
	sess     *mcp.ClientSession
	readOnly bool
}

func newStdio(s *server) *stdio { return &stdio{s: s, sessions: map[string]*stdioSession{}} }

// forSession is the server's tools for one run, the caller reaching this
// session's process, and the run's end.
func (st *stdio) forSession(ctx context.Context, scope Scope) ([]offer, caller, func()) {
	readOnly := scope.Mode == planning.PlanModePlan
	st.begin(scope.SessionID)
	end := func() { st.end(scope.SessionID, ctx.Err() != nil) }
	st.mu.Lock()
	offers, listed := st.offers, st.listed
	st.mu.Unlock()
	if !listed && st.mayStart(scope.SessionID) {
		var err error
		if offers, err = st.relist(ctx, scope, readOnly); err != nil {
			st.failed(scope.SessionID)
			st.s.m.log.Warn("MCP stdio server did not start; its tools are left out of this session's runs for a while",
				"server", st.s.cfg.Name, "session", scope.SessionID, "retry_in", stdioRetry, "err", err.Error())
		}
	}
	call := func(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
		c, err := st.conn(ctx, scope, readOnly)
		if err != nil {
			return nil, err
		}
		res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		var wire *jsonrpc.Error
		if err != nil && ctx.Err() == nil && !errors.As(err, &wire) {
			st.stopConn(scope.SessionID, c) // the next call starts it again
			err = fmt.Errorf("%v (stderr: %s)", err, oneLine(c.proc.Stderr()))
		}
		return res, err
	}
	return offers, call, end
}

// relist lists the tools through this session's process (starting it).
func (st *stdio) relist(ctx context.Context, scope Scope, readOnly bool) ([]offer, error) {
	c, err := st.conn(ctx, scope, readOnly)
	if err != nil {
		return nil, err
	}
	tools, err := listTools(ctx, c.sess)
	if err != nil {
		return nil, err
	}
	offers := st.s.buildOffers(tools)
	st.mu.Lock()
	st.offers, st.listed = offers, true
	st.mu.Unlock()
	return offers, nil
}

// conn is the session's running process, started (or restarted in the
// run's mode) when needed.
func (st *stdio) conn(ctx context.Context, scope Scope, readOnly bool) (*stdioConn, error) {
	id := scope.SessionID
	st.mu.Lock()
	old := st.session(id).conn
	st.mu.Unlock()
	if old != nil && old.readOnly == readOnly && old.alive() {
		return old, nil
	}
	if old != nil {
		st.stopConn(id, old)
	}
	c, err := st.start(ctx, scope, readOnly)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	s := st.session(id)
	if s.conn != nil { // another call of the session started one meanwhile
		st.mu.Unlock()
		c.stop()
		return st.conn(ctx, scope, readOnly)
	}
	if st.s.m.ctx.Err() != nil { // Close has begun: it would not stop this one
		st.mu.Unlock()
		c.stop()
		return nil, errors.New("h9 is shutting down")
	}
	s.conn = c
	st.mu.Unlock()
	return c, nil
}

// session is id's entry (st.mu held), made when missing.
func (st *stdio) session(id string) *stdioSession {
	s := st.sessions[id]
	if s == nil {
		s = &stdioSession{last: time.Now()}
		st.sessions[id] = s
	}
	return s
}

func (st *stdio) start(ctx context.Context, scope Scope, readOnly bool) (*stdioConn, error) {
	if scope.Workspace == nil {
		return nil, errors.New("no workspace to start it in")
	}
	if st.s.m.ctx.Err() != nil {
		return nil, errors.New("h9 is shutting down")
	}
	ws, err := scope.Workspace()
	if err != nil {
		return nil, err
	}
	proc, err := ws.StartStdio(st.s.cfg.Command, workspace.StdioOptions{ReadOnly: readOnly})
	if err != nil {
		return nil, fmt.Errorf("starting %q: %w", st.s.cfg.Command, err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "h9", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { st.markStale() },
		Capabilities:           &mcp.ClientCapabilities{},
	})
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	t := &mcp.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin, MaxLineLength: maxMessage}
	sess, err := client.Connect(cctx, t, nil)
	if err != nil {
		proc.Stop()
		return nil, fmt.Errorf("%q did not answer as an MCP server: %v (stderr: %s)", st.s.cfg.Command, err, oneLine(proc.Stderr()))
	}
	return &stdioConn{proc: proc, sess: sess, readOnly: readOnly}, nil
}

func (c *stdioConn) alive() bool {
	select {
	case <-c.proc.Done():
		return false
	default:
		return true
	}
}

// stop ends the process first, so that closing the MCP session waits for
// nothing.
func (c *stdioConn) stop() {
	c.proc.Stop()
	c.sess.Close()
}

func (st *stdio) markStale() {
	st.mu.Lock()
	st.listed = false
	st.mu.Unlock()
}

// stopConn stops c if it is still the session's process.
func (st *stdio) stopConn(id string, c *stdioConn) {
	st.mu.Lock()
	if s := st.sessions[id]; s != nil && s.conn == c {
		s.conn = nil
	}
	st.mu.Unlock()
	c.stop()
}

// state is the server as doctor reports it: the cached list, if any, and
// the processes running now.
func (st *stdio) state() (tools int, listed bool, running int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range st.sessions {
		if s.conn != nil {
			running++
		}
	}
	return len(st.offers), st.offers != nil, running
}

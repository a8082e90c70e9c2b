package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdio is one stdio server: a process per session, started in the
// session's sandbox on first use and stopped when the session's run ends;
// its tool list is shared by every session (the same command gives the
// same tools), listed again when a process says it changed.
type stdio struct {
	s *server

	mu     sync.Mutex
	offers []offer
	listed bool // offers holds a listing, not yet outdated
	procs  map[string]*stdioConn
}

type stdioConn struct {
	proc     *workspace.StdioProcess
	sess     *mcp.ClientSession
	readOnly bool
}

func newStdio(s *server) *stdio { return &stdio{s: s, procs: map[string]*stdioConn{}} }

// forSession is the server's tools for one run, the caller reaching this
// session's process, and the run's end, which stops it.
func (st *stdio) forSession(ctx context.Context, scope Scope) ([]offer, caller, func()) {
	readOnly := scope.Mode == planning.PlanModePlan
	stop := func() { st.stopSession(scope.SessionID) }
	st.mu.Lock()
	offers, listed := st.offers, st.listed
	st.mu.Unlock()
	if !listed {
		var err error
		if offers, err = st.relist(ctx, scope, readOnly); err != nil {
			st.s.m.log.Warn("MCP stdio server did not start; its tools are left out of this run",
				"server", st.s.cfg.Name, "session", scope.SessionID, "err", err.Error())
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
			st.stopSession(scope.SessionID) // the next call starts it again
			err = fmt.Errorf("%v (stderr: %s)", err, oneLine(c.proc.Stderr()))
		}
		return res, err
	}
	return offers, call, stop
}

// relist lists the tools through this session's process (starting it).
func (st *stdio) relist(ctx context.Context, scope Scope, readOnly bool) ([]offer, error) {
	c, err := st.conn(ctx, scope, readOnly)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range c.sess.Tools(lctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
		if len(tools) > 1000 {
			break
		}
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
	st.mu.Lock()
	c := st.procs[scope.SessionID]
	st.mu.Unlock()
	if c != nil && c.readOnly == readOnly {
		select {
		case <-c.proc.Done():
		default:
			return c, nil
		}
	}
	st.stopSession(scope.SessionID)
	c, err := st.start(ctx, scope, readOnly)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.procs[scope.SessionID] = c
	st.mu.Unlock()
	return c, nil
}

func (st *stdio) start(ctx context.Context, scope Scope, readOnly bool) (*stdioConn, error) {
	if scope.Workspace == nil {
		return nil, errors.New("no workspace to start it in")
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

func (st *stdio) markStale() {
	st.mu.Lock()
	st.listed = false
	st.mu.Unlock()
}

// stopSession stops the session's process, if any: the process first, so
// that closing the MCP session waits for nothing.
func (st *stdio) stopSession(id string) {
	st.mu.Lock()
	c := st.procs[id]
	delete(st.procs, id)
	st.mu.Unlock()
	if c != nil {
		c.proc.Stop()
		c.sess.Close()
	}
}

func (st *stdio) closeAll() {
	st.mu.Lock()
	ids := make([]string, 0, len(st.procs))
	for id := range st.procs {
		ids = append(ids, id)
	}
	st.mu.Unlock()
	for _, id := range ids {
		st.stopSession(id)
	}
}

// state is the server as doctor reports it: the cached list, if any.
func (st *stdio) state() (tools int, listed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.offers), st.offers != nil
}

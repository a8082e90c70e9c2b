package mcp

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	DefaultCallTimeout = 60 * time.Second
	connectTimeout     = 10 * time.Second
	listTimeout        = 10 * time.Second
	// listWait is how long a run's start waits for a connection in
	// progress before going on without that server's tools.
	listWait = 3 * time.Second
)

// Metrics counts MCP calls; server names are never labels.
type Metrics interface {
	MCPCall(kind, outcome string) // kind remote|stdio; outcome ok|tool_error|failed|timeout
}

// Options configure a Manager.
type Options struct {
	Servers     []Server
	CallTimeout time.Duration // per call; 0 = DefaultCallTimeout
	StdioIdle   time.Duration // a session's stdio server outlives its last run by this; 0 = DefaultStdioIdle
	Logger      *slog.Logger  // nil = discard
	Metrics     Metrics       // nil = counts nothing
}

// Manager is the agent's agent.ToolSource for every configured server. Its
// goroutines (connections being made) are waited for by Close.
type Manager struct {
	opts    Options
	log     *slog.Logger
	scrub   scrubber
	servers []*server
	ctx     context.Context // ends with Close: background connections
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type noMetrics struct{}

func (noMetrics) MCPCall(string, string) {}

// New makes the manager; nothing is contacted until Start or a run.
func New(opts Options) *Manager {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.StdioIdle <= 0 {
		opts.StdioIdle = DefaultStdioIdle
	}
	m := &Manager{opts: opts, log: opts.Logger, scrub: newScrubber(opts.Servers)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, s := range opts.Servers {
		srv := &server{cfg: s, m: m}
		if s.Remote() {
			srv.remote = newRemote(srv)
		} else {
			srv.stdio = newStdio(srv)
		}
		m.servers = append(m.servers, srv)
	}
	if slices.ContainsFunc(m.servers, func(s *server) bool { return s.stdio != nil }) {
		m.wg.Add(1)
		go m.reapIdle()
	}
	return m
}

// Start begins connecting to the remote servers in the background: a
// server that is down delays nothing.
func (m *Manager) Start() {
	for _, s := range m.servers {
		if s.remote != nil {
			s.remote.kick()
		}
	}
}

// Close ends every connection and stdio server and waits for them and
// for the Manager's goroutines.
func (m *Manager) Close() {
	m.cancel()
	for _, s := range m.servers {
		if s.remote != nil {
			s.remote.close()
		} else {
			s.stdio.closeAll()
		}
	}
	m.wg.Wait()
}

// Scrub replaces the header values in s (for a caller's own logs).
func (m *Manager) Scrub(s string) string { return m.scrub.String(s) }

// Tools implements agent.ToolSource: the tools of the servers in scope, in
// the file's order.
func (m *Manager) Tools(ctx context.Context, scope Scope) Set {
	var set Set
	var closers []func()
	for _, s := range m.servers {
		if !s.inScope(scope) {
			continue
		}
		tools, closeFn := s.toolsFor(ctx, scope)
		set.Tools = append(set.Tools, tools...)
		if closeFn != nil {
			closers = append(closers, closeFn)
		}
	}
	if len(closers) > 0 {
		set.Close = func() {
			for _, c := range closers {
				c()
			}
		}
	}
	return set
}

// server is one configured server and what h9 knows of its tools.
type server struct {
	cfg    Server
	m      *Manager
	remote *remote // exactly one of remote and stdio
	stdio  *stdio
}

func (s *server) inScope(scope Scope) bool {
	return listed(s.cfg.Repos, scope.Repo) && listed(s.cfg.Channels, scope.Channel)
}

// listed: an empty list allows everything, else v must be in it.
func listed(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), v) {
			return true
		}
	}
	return false
}

func (s *server) toolsFor(ctx context.Context, scope Scope) ([]Tool, func()) {
	if s.remote != nil {
		offers := s.remote.toolOffers(ctx)
		return s.external(offers, s.remote.call), nil
	}
	offers, callFn, closeFn := s.stdio.forSession(ctx, scope)
	return s.external(offers, callFn), closeFn
}

// caller runs one call of a tool of the server.
type caller func(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error)

func (s *server) external(offers []offer, call caller) []Tool {
	out := make([]Tool, 0, len(offers))
	for _, o := range offers {
		out = append(out, s.tool(o, call))
	}
	return out
}

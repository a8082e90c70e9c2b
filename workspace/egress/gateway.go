package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// In the directory a Route names: the proxy's socket, and the loopback
// entries of the command's policy (Policy.LoopbackAddrs), one host:port a
// line, for the forwarder to listen on inside the sandbox.
const (
	SocketName   = "proxy.sock"
	LoopbackName = "loopback"
)

// Defaults of Config's limits.
const (
	DefaultMaxConns      = 1024
	DefaultHeaderTimeout = 10 * time.Second
	DefaultDialTimeout   = 10 * time.Second
)

// Decision labels of Metrics.
const (
	DecisionAllowed = "allowed"
	DecisionRefused = "refused"
	DecisionError   = "error"
)

// Metrics counts requests by decision (h9_egress_requests_total).
type Metrics interface{ EgressRequest(decision string) }

// Attempt is a command's refused request that an entry could allow, told
// once per session and host:port.
type Attempt struct {
	SessionID string
	// Command is the process that tried, as the forwarder found it
	// (`go mod download`), else the command line the agent ran.
	Command  string
	HostPort string
}

// Config configures a Gateway.
type Config struct {
	// Dir holds one directory per running command, each with its socket;
	// the sandbox sees only its own. "" makes a private temporary one.
	Dir string
	// Policy is the session's allow list when a command starts; an empty
	// one means the command gets no network.
	Policy func(sessionID string) (Policy, error)
	// Refused hears of each fixable refusal, once per session and
	// host:port. It must not block.
	Refused  func(Attempt)
	Resolver Resolver // nil: the system's
	Metrics  Metrics  // nil: none
	// MaxConns bounds one session's open connections; more are answered
	// with 503 and closed.
	MaxConns      int
	HeaderTimeout time.Duration // to read a request's header (slow clients)
	DialTimeout   time.Duration
}

// Gateway runs the proxy: one listener per running command, on a unix
// socket bound into that command's sandbox.
type Gateway struct {
	cfg     Config
	dir     string
	tempDir bool
	own     map[netip.Addr]bool

	mu       sync.Mutex
	sessions map[string]*session
	// told are the host:ports given to Refused, per session, kept between
	// commands (the bot keeps them across restarts).
	told   map[string]map[string]bool
	closed bool
}

// session is what a session's running commands share.
type session struct {
	id       string
	users    int           // running commands
	conns    chan struct{} // a slot per open connection
	extra    []Entry       // allowed while its commands ran
	commands map[*command]struct{}
}

// New checks cfg and prepares the socket directory.
func New(cfg Config) (*Gateway, error) {
	if cfg.Policy == nil {
		return nil, errors.New("egress: Config.Policy is nil")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	g := &Gateway{cfg: cfg, dir: cfg.Dir, own: hostAddrs(), sessions: map[string]*session{}, told: map[string]map[string]bool{}}
	if g.dir == "" {
		// Short and private: a socket's path has at most 107 bytes.
		d, err := os.MkdirTemp("", "h9-egress-")
		if err != nil {
			return nil, fmt.Errorf("egress: %w", err)
		}
		g.dir, g.tempDir = d, true
	} else if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	return g, nil
}

// Route opens a listener for one command of the session, if its policy
// allows anything: the directory of its socket, and done, which closes
// the listener and every connection the command opened and waits for
// them. Dir "" means no network.
func (g *Gateway) Route(sessionID, commandLine string) (dir string, done func(), err error) {
	pol, err := g.cfg.Policy(sessionID)
	if err != nil {
		return "", nil, fmt.Errorf("the session's network allow list: %w", err)
	}
	if pol.Empty() {
		return "", func() {}, nil
	}
	s, err := g.join(sessionID)
	if err != nil {
		return "", nil, err
	}
	c, err := g.startCommand(s, pol, commandLine)
	if err != nil {
		g.part(s)
		return "", nil, err
	}
	return c.dir, sync.OnceFunc(func() { c.stop(); g.part(s) }), nil
}

func (g *Gateway) join(id string) (*session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("egress: gateway closed")
	}
	s := g.sessions[id]
	if s == nil {
		s = &session{id: id, conns: make(chan struct{}, g.cfg.MaxConns), commands: map[*command]struct{}{}}
		g.sessions[id] = s
	}
	s.users++
	return s, nil
}

func (g *Gateway) part(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(g.sessions, s.id)
	}
}

// Allow adds e to the session's running commands (a click on "Allow for
// this session"); later commands get it from Config.Policy.
func (g *Gateway) Allow(sessionID string, e Entry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[sessionID]; s != nil {
		s.extra = append(s.extra, e)
	}
}

// policyOf is a command's policy with what was allowed since it started.
func (g *Gateway) policyOf(c *command) Policy {
	g.mu.Lock()
	defer g.mu.Unlock()
	return c.policy.With(c.session.extra...)
}

// tell gives a fixable refusal to Config.Refused once per session, with
// the words of the command that tried (who; the command line it was
// started with when who knows none).
func (g *Gateway) tell(c *command, hp string, who func() string) {
	g.mu.Lock()
	told := g.told[c.session.id]
	if told == nil {
		told = map[string]bool{}
		g.told[c.session.id] = told
	}
	seen := told[hp]
	told[hp] = true
	g.mu.Unlock()
	if seen || g.cfg.Refused == nil {
		return
	}
	words := who()
	if words == "" {
		words = c.line
	}
	g.cfg.Refused(Attempt{SessionID: c.session.id, Command: words, HostPort: hp})
}

func (g *Gateway) count(decision string) {
	if g.cfg.Metrics != nil {
		g.cfg.Metrics.EgressRequest(decision)
	}
}

// Close stops every command's listener and removes a temporary directory.
func (g *Gateway) Close() error {
	g.mu.Lock()
	g.closed = true
	var running []*command
	for _, s := range g.sessions {
		for c := range s.commands {
			running = append(running, c)
		}
	}
	g.mu.Unlock()
	for _, c := range running {
		c.stop()
	}
	if g.tempDir {
		return os.RemoveAll(g.dir)
	}
	return nil
}

// dialChecked dials the checked addresses in turn, never the name.
func (g *Gateway) dialChecked(ctx context.Context, t target) (net.Conn, error) {
	d := net.Dialer{Timeout: g.cfg.DialTimeout}
	var errs []error
	for _, a := range t.addrs {
		conn, err := d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("connecting to %s: %w", t.hostPort, errors.Join(errs...))
}

// socketPath is a command's socket under dir.
func socketPath(dir string) string { return filepath.Join(dir, SocketName) }

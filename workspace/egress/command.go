package egress

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// command is one running command's listener and what it opened.
type command struct {
	g       *Gateway
	session *session
	policy  Policy
	line    string
	dir     string
	ln      net.Listener
	server  *http.Server
	tr      *http.Transport

	wg    sync.WaitGroup // the accept loop and every connection's handler
	mu    sync.Mutex
	conns map[net.Conn]struct{} // open client connections, tunnels included
	done  bool
}

func (g *Gateway) startCommand(s *session, pol Policy, line string) (*command, error) {
	dir, err := os.MkdirTemp(g.dir, "c")
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	// The sandbox's uid may differ from h9's; nothing else sees this path.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress: %w", err)
	}
	if err := writeLoopback(dir, pol); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress: %w", err)
	}
	ln, err := net.Listen("unix", socketPath(dir))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress: listening: %w", err)
	}
	if err := os.Chmod(socketPath(dir), 0o777); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress: %w", err)
	}
	c := &command{g: g, session: s, policy: pol, line: line, dir: dir, ln: ln, conns: map[net.Conn]struct{}{}}
	c.tr = c.transport()
	c.server = &http.Server{
		Handler:           http.HandlerFunc(c.serveHTTP),
		ReadHeaderTimeout: g.cfg.HeaderTimeout,
		IdleTimeout:       2 * g.cfg.HeaderTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState:         c.connState,
		ConnContext:       withConn,
	}
	c.server.SetKeepAlivesEnabled(false) // one request per connection: headerGuard checks it
	g.mu.Lock()
	s.commands[c] = struct{}{}
	g.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.server.Serve(limitListener{Listener: ln, c: c})
	}()
	return c, nil
}

// writeLoopback lists the policy's loopback entries for the forwarder.
func writeLoopback(dir string, pol Policy) error {
	var b strings.Builder
	for _, ap := range pol.LoopbackAddrs() {
		b.WriteString(ap.String() + "\n")
	}
	return os.WriteFile(filepath.Join(dir, LoopbackName), []byte(b.String()), 0o644)
}

// stop closes the listener and every connection, then waits for their
// goroutines: no connection outlives its command.
func (c *command) stop() {
	c.mu.Lock()
	already := c.done
	c.done = true
	open := make([]net.Conn, 0, len(c.conns))
	for conn := range c.conns {
		open = append(open, conn)
	}
	c.mu.Unlock()
	if already {
		c.wg.Wait()
		return
	}
	c.server.Close()
	for _, conn := range open {
		conn.Close()
	}
	c.wg.Wait()
	c.tr.CloseIdleConnections()
	c.g.mu.Lock()
	delete(c.session.commands, c)
	c.g.mu.Unlock()
	os.RemoveAll(c.dir)
}

// track records an accepted connection; false once the command stopped.
func (c *command) track(conn net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	c.conns[conn] = struct{}{}
	return true
}

func (c *command) untrack(conn net.Conn) {
	c.mu.Lock()
	delete(c.conns, conn)
	c.mu.Unlock()
}

// connState keeps handler goroutines counted, so stop can wait for them.
func (c *command) connState(conn net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		c.wg.Add(1)
	case http.StateHijacked, http.StateClosed:
		c.wg.Done()
	}
}

// limitListener holds a session slot for each open connection; over the
// bound a connection is answered 503 and closed at once.
type limitListener struct {
	net.Listener
	c *command
}

func (l limitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.c.session.conns <- struct{}{}:
		default:
			l.c.g.count(DecisionError)
			conn.SetWriteDeadline(time.Now().Add(time.Second))
			io.WriteString(conn, tooMany)
			conn.Close()
			continue
		}
		if uc, ok := conn.(*net.UnixConn); ok {
			conn = newPassedConn(uc) // the forwarder's, or a client's own
		}
		sc := &slotConn{Conn: conn, guard: &headerGuard{Conn: conn}, c: l.c}
		if !l.c.track(sc) {
			sc.Close()
			continue
		}
		return sc, nil
	}
}

const tooMany = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 55\r\n\r\n" +
	"h9: too many open connections through the proxy; wait\n"

// slotConn gives its slot back once, when closed.
type slotConn struct {
	net.Conn
	guard *headerGuard // reads go through it
	c     *command
	once  sync.Once
}

func (s *slotConn) Read(p []byte) (int, error) { return s.guard.Read(p) }

func (s *slotConn) Close() error {
	err := s.Conn.Close()
	s.once.Do(func() {
		s.c.untrack(s)
		<-s.c.session.conns
	})
	return err
}

// transport forwards plain HTTP for this command only, dialing the
// address the request was checked against (put in its context).
func (c *command) transport() *http.Transport {
	return &http.Transport{
		Proxy: nil, // never h9's own proxy settings
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			t, ok := ctx.Value(targetKey{}).(target)
			if !ok {
				return nil, fmt.Errorf("egress: no checked address")
			}
			return c.g.dialChecked(ctx, t)
		},
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
}

type targetKey struct{}

package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/h9-app/h9/workspace/netx"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessage bounds one message from a server (the SDK's default is 16 MiB).
const maxMessage = 4 << 20

// reconnectBackoff spaces the attempts after a failed one.
var reconnectBackoff = netx.Backoff{Base: time.Second, Max: time.Minute}

// remote is one Streamable HTTP server, shared by every session: one MCP
// session, made when first needed and again after it broke, with backoff.
type remote struct {
	s      *server
	client *mcp.Client
	http   *http.Client

	mu       sync.Mutex
	sess     *mcp.ClientSession
	offers   []offer
	stale    bool          // notifications/tools/list_changed arrived
	attempt  chan struct{} // closed when the attempt in progress ends
	err      error         // the last failure, for doctor and the next attempt
	failures int
	next     time.Time // no attempt before
}

func newRemote(s *server) *remote {
	r := &remote{s: s}
	r.client = mcp.NewClient(&mcp.Implementation{Name: "h9", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { r.markStale() },
		Capabilities:           &mcp.ClientCapabilities{},
	})
	dialer := &net.Dialer{Timeout: connectTimeout}
	base := netx.Transport(8)
	base.Proxy, base.DialContext, base.TLSHandshakeTimeout = nil, dialer.DialContext, connectTimeout
	// A server that never answers fails the request; an SSE stream, once
	// its headers came, is not cut.
	base.ResponseHeaderTimeout = s.m.opts.CallTimeout + connectTimeout
	r.http = &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: base}}
	return r
}

// headerTransport adds the configured headers to every request h9 makes to
// the server; they never go anywhere else (a redirect to another host
// loses them, see CheckRedirect's default).
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(headerOf(k), v)
	}
	return t.base.RoundTrip(req)
}

func (r *remote) markStale() {
	r.mu.Lock()
	r.stale = true
	r.mu.Unlock()
}

// kick starts a connection attempt unless one is running, a session is
// up, or the backoff says not yet. It returns the attempt to wait for.
func (r *remote) kick() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil || r.attempt != nil || time.Now().Before(r.next) || r.s.m.ctx.Err() != nil {
		return r.attempt
	}
	done := make(chan struct{})
	r.attempt = done
	r.s.m.wg.Add(1)
	go func() {
		defer r.s.m.wg.Done()
		defer close(done)
		r.connect()
	}()
	return done
}

// connect makes the session and lists the tools, within deadlines.
func (r *remote) connect() {
	ctx, cancel := context.WithTimeout(r.s.m.ctx, connectTimeout+listTimeout)
	defer cancel()
	t := &mcp.StreamableClientTransport{Endpoint: r.s.cfg.URL, HTTPClient: r.http, MaxRetries: -1, MaxEventSize: maxMessage}
	sess, err := r.client.Connect(ctx, t, nil)
	var offers []offer
	if err == nil {
		if offers, err = r.list(ctx, sess); err != nil {
			sess.Close()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempt = nil
	if err != nil {
		r.failed(err)
		return
	}
	if r.failures > 0 || r.err != nil {
		r.s.m.log.Info("MCP server answers again", "server", r.s.cfg.Name, "tools", len(offers))
	}
	r.sess, r.offers, r.stale, r.err, r.failures = sess, offers, false, nil, 0
}

// failed records a failed attempt (r.mu held) and when to try again.
func (r *remote) failed(err error) {
	r.failures++
	r.err = errors.New(r.s.m.scrub.String(oneLine(err.Error())))
	backoff := reconnectBackoff.Step(r.failures)
	r.next = time.Now().Add(backoff)
	if r.failures == 1 || r.failures%10 == 0 {
		r.s.m.log.Warn("MCP server unreachable; its tools are left out until it answers",
			"server", r.s.cfg.Name, "err", r.err.Error(), "attempts", r.failures, "retry_in", backoff)
	}
}

func (r *remote) list(ctx context.Context, sess *mcp.ClientSession) ([]offer, error) {
	tools, err := listTools(ctx, sess)
	if err != nil {
		return nil, err
	}
	return r.s.buildOffers(tools), nil
}

// offers is the tool list for a run: the cached one (listed again when the
// server said it changed), or, while a first connection is being made,
// what it brings within listWait.
func (r *remote) toolOffers(ctx context.Context) []offer {
	if done := r.kick(); done != nil {
		t := time.NewTimer(listWait)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	r.mu.Lock()
	sess, stale, offers := r.sess, r.stale, r.offers
	r.mu.Unlock()
	if sess == nil || !stale {
		return offers
	}
	fresh, err := r.list(ctx, sess)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.s.m.log.Warn("listing an MCP server's tools again failed; the last list stays", "server", r.s.cfg.Name, "err", r.s.m.scrub.String(err.Error()))
		return offers
	}
	if r.sess == sess {
		r.offers, r.stale = fresh, false
	}
	return fresh
}

// call is one tool call on the shared session; a broken session is dropped
// so that the next use connects again.
func (r *remote) call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	r.mu.Lock()
	sess, lastErr := r.sess, r.err
	r.mu.Unlock()
	if sess == nil {
		r.kick()
		if lastErr == nil {
			lastErr = errors.New("not connected yet")
		}
		return nil, lastErr
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var wire *jsonrpc.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &wire) {
		r.drop(sess, err) // not the server's answer: the connection is in doubt
	}
	return res, err
}

func (r *remote) drop(sess *mcp.ClientSession, err error) {
	r.mu.Lock()
	if r.sess == sess {
		r.sess = nil
		r.failed(err)
		r.next = time.Now() // the next use tries at once
	}
	r.mu.Unlock()
	sess.Close()
}

// state is the server as doctor reports it.
func (r *remote) state() (connected bool, tools int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sess != nil, len(r.offers), r.err
}

func (r *remote) close() {
	r.mu.Lock()
	sess := r.sess
	r.sess = nil
	r.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

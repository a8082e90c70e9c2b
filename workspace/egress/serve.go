package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// serveHTTP handles one request: CONNECT becomes a tunnel, an
// absolute-form http:// request is forwarded, anything else is refused.
func (c *command) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// Counted apart from the connection, which stops counting once hijacked
	// (a tunnel, an upgrade): stop waits for the handler itself.
	c.wg.Add(1)
	defer c.wg.Done()
	if reason := malformed(r); reason != "" {
		c.g.count(DecisionError)
		w.Header().Set("Connection", "close")
		http.Error(w, "h9 proxy: "+reason, http.StatusBadRequest)
		return
	}
	host, port, err := destination(r)
	if err != nil {
		c.g.count(DecisionError)
		http.Error(w, "h9 proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	t, err := decide(r.Context(), c.g.cfg.Resolver, c.g.own, c.g.policyOf(c), host, port)
	if err != nil {
		c.refuse(w, r, err)
		return
	}
	c.g.count(DecisionAllowed)
	if r.Method == http.MethodConnect {
		c.tunnel(w, r, t)
		return
	}
	c.forward(w, r, t)
}

// malformed names what h9 will not forward: framing a server behind it
// could read differently (request smuggling).
func malformed(r *http.Request) string {
	te, cl := r.Header.Values("Transfer-Encoding"), r.Header.Values("Content-Length")
	switch {
	case len(r.TransferEncoding) > 0 && len(cl) > 0, len(te) > 0 && len(cl) > 0:
		return "a request with both Transfer-Encoding and Content-Length"
	case len(cl) > 1:
		return "a request with more than one Content-Length"
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				return "a header value with a line break"
			}
		}
	}
	return ""
}

// destination is the host and port a proxy request is for.
func destination(r *http.Request) (string, int, error) {
	if r.Method == http.MethodConnect {
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil {
			return "", 0, fmt.Errorf("CONNECT needs host:port, got %q", r.Host)
		}
		port, err := parsePort(p)
		return host, port, err
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		return "", 0, errors.New("this is a proxy: send absolute-form requests (http://host/path) or CONNECT")
	}
	if r.URL.Scheme != "http" {
		return "", 0, fmt.Errorf("scheme %q is not forwarded: use CONNECT for https", r.URL.Scheme)
	}
	port := 80
	if p := r.URL.Port(); p != "" {
		var err error
		if port, err = parsePort(p); err != nil {
			return "", 0, err
		}
	}
	return r.URL.Hostname(), port, nil
}

// refuse answers 403 with the reason (502 when resolution failed), and
// tells a fixable refusal to the thread.
func (c *command) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var ref *Refused
	if !errors.As(err, &ref) {
		c.g.count(DecisionError)
		http.Error(w, "h9 proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	c.g.count(DecisionRefused)
	if ref.Fixable {
		c.g.tell(c, ref.HostPort, func() string { return whoOf(r) })
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-H9-Refused", ref.HostPort)
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, ref.Error())
}

// forward sends a plain HTTP request to the checked address: parsed and
// written anew, so only one framing ever reaches the server.
func (c *command) forward(w http.ResponseWriter, r *http.Request, t target) {
	ctx := context.WithValue(r.Context(), targetKey{}, t)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", pr.In.URL.Host
			pr.Out.Host = pr.In.URL.Host
			pr.Out.Header.Del("Proxy-Authorization")
		},
		Transport:     c.tr,
		FlushInterval: -1,
		BufferPool:    copyBuffers,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			c.g.count(DecisionError)
			http.Error(w, "h9 proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
}

// copyBuffers are plain HTTP forwarding's copy buffers: larger than
// ReverseProxy's 32 KiB, so a download takes fewer system calls.
var copyBuffers = &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte  { return *(b.p.Get().(*[]byte)) }
func (b *bufferPool) Put(s []byte) { b.p.Put(&s) }

// tunnel connects to the checked address and then copies bytes both
// ways, never looking inside (TLS stays end to end).
func (c *command) tunnel(w http.ResponseWriter, r *http.Request, t target) {
	up, err := c.g.dialChecked(r.Context(), t)
	if err != nil {
		c.g.count(DecisionError)
		http.Error(w, "h9 proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "h9 proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !c.track(up) {
		up.Close()
		client.Close()
		return
	}
	defer func() { up.Close(); c.untrack(up); client.Close() }()
	client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if n := buf.Reader.Buffered(); n > 0 { // bytes the client sent after the header
		pending, _ := buf.Reader.Peek(n)
		if _, err := up.Write(pending); err != nil {
			return
		}
	}
	pipe(unwrap(client), up)
}

// unwrap gives the socket itself, so copies read it directly (the guard
// has nothing left to give once the header is read: buffered bytes were
// sent).
func unwrap(c net.Conn) net.Conn {
	sc, ok := c.(*slotConn)
	if !ok || len(sc.guard.head) > 0 {
		return c
	}
	if pc, ok := sc.Conn.(*passedConn); ok {
		if pc.pending() {
			return c
		}
		return pc.current()
	}
	return sc.Conn
}

// pipe copies both ways until one side is done, then closes both.
func pipe(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		copyConn(b, a)
		closeWrite(b)
		close(done)
	}()
	copyConn(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

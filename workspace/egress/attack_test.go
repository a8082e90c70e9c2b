package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/egress"
)

// dialProxy opens a command's socket directly, as the forwarder does.
func dialProxy(t testing.TB, r *rig, command string) (net.Conn, func()) {
	t.Helper()
	dir, done, err := r.gw.Route("s1", command)
	if err != nil || dir == "" {
		t.Fatalf("route: %q %v", dir, err)
	}
	c, err := net.Dial("unix", filepath.Join(dir, egress.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	return c, done
}

// roundTrip writes raw bytes and reads one response.
func roundTrip(t testing.TB, c net.Conn, raw string) (*http.Response, string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func serverPort(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return p
}

// A name on the allow list that resolves to loopback is refused after
// resolution, and nothing reaches the server.
func TestDNSRebindingIsRefused(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	t.Cleanup(srv.Close)
	p := serverPort(srv)
	r := newRig(t, []string{"evil.test", "metadata.test"}, fakeDNS{
		"evil.test":     loopback,
		"metadata.test": {netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("169.254.169.254")},
	}, nil)
	for _, host := range []string{"evil.test", "metadata.test"} {
		c, done := dialProxy(t, r, "curl")
		resp, body := roundTrip(t, c, "CONNECT "+host+":"+p+" HTTP/1.1\r\nHost: "+host+":"+p+"\r\n\r\n")
		if resp.StatusCode != 403 || !strings.Contains(body, host+":"+p) || !strings.Contains(body, "resolves to") {
			t.Errorf("%s: %d %q, want 403 naming the host and its address", host, resp.StatusCode, body)
		}
		c.Close()
		done()
	}
	if hits != 0 {
		t.Errorf("the loopback server was reached %d times", hits)
	}
	if got := r.told.list(); len(got) != 0 {
		t.Errorf("a rebinding refusal offered an Allow button (adding the name would not help): %+v", got)
	}
}

// Literal IPs, loopback included, are refused unless an entry names that
// exact address and port; a refused name is never resolved.
func TestLiteralIPsAndRefusedNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(srv.Close)
	p := serverPort(srv)
	resolved := fakeDNS{} // any lookup fails loudly below
	r := newRig(t, []string{"127.0.0.1:1"}, resolved, nil)
	cases := []string{
		"CONNECT 127.0.0.1:" + p + " HTTP/1.1\r\nHost: 127.0.0.1:" + p + "\r\n\r\n",
		"CONNECT [::1]:" + p + " HTTP/1.1\r\nHost: [::1]:" + p + "\r\n\r\n",
		"CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n",
		"GET http://127.0.0.1:" + p + "/ HTTP/1.1\r\nHost: 127.0.0.1:" + p + "\r\n\r\n",
		"GET http://refused.test:" + p + "/ HTTP/1.1\r\nHost: refused.test:" + p + "\r\n\r\n",
		"CONNECT refused.test:443 HTTP/1.1\r\nHost: refused.test:443\r\n\r\n",
	}
	for _, raw := range cases {
		c, done := dialProxy(t, r, "probe")
		resp, body := roundTrip(t, c, raw)
		if resp.StatusCode != 403 || !strings.Contains(body, "h9 refused") || !strings.Contains(body, "allow") {
			t.Errorf("%q: %d %q, want a 403 that says how to allow it", raw, resp.StatusCode, body)
		}
		c.Close()
		done()
	}
	if r.metrics.get(egress.DecisionRefused) != len(cases) || r.metrics.get(egress.DecisionAllowed) != 0 {
		t.Errorf("metrics %+v", r.metrics.n)
	}
	// The exact entry lets it through.
	r2 := newRig(t, []string{"127.0.0.1:" + p}, resolved, nil)
	c, done := dialProxy(t, r2, "probe")
	defer done()
	resp, body := roundTrip(t, c, "GET http://127.0.0.1:"+p+"/x HTTP/1.1\r\nHost: 127.0.0.1:"+p+"\r\n\r\n")
	if resp.StatusCode != 200 || !strings.Contains(body, "hello") {
		t.Errorf("named IP: %d %q", resp.StatusCode, body)
	}
}

// Conflicting framing never reaches the server: h9 answers 400 itself.
func TestHeaderSmugglingIsRefused(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.Path+" "+string(b))
	}))
	t.Cleanup(srv.Close)
	p := serverPort(srv)
	r := newRig(t, []string{"app.test", "127.0.0.1:" + p}, fakeDNS{"app.test": loopback}, nil)
	u := "http://app.test:" + p
	attacks := []string{
		"POST " + u + "/a HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: app.test\r\n\r\n",
		"POST " + u + "/b HTTP/1.1\r\nHost: app.test\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
		"POST " + u + "/c HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
		"POST " + u + "/d HTTP/1.1\r\nHost: app.test\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc",
		"POST " + u + "/e HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc",
	}
	for _, raw := range attacks {
		c, done := dialProxy(t, r, "attack")
		resp, _ := roundTrip(t, c, raw)
		if resp.StatusCode/100 != 4 && resp.StatusCode != 501 {
			t.Errorf("%q: status %d, want it refused", raw, resp.StatusCode)
		}
		c.Close()
		done()
	}
	for _, s := range seen {
		if strings.Contains(s, "smuggled") {
			t.Errorf("the server saw a smuggled request: %q", seen)
		}
	}
	if len(seen) != 0 {
		t.Errorf("the server saw %q; want every ambiguous request stopped at the proxy", seen)
	}
}

// A client that never finishes its header is cut off at the header
// deadline.
func TestSlowLorisIsCutOff(t *testing.T) {
	r := newRig(t, []string{"app.test"}, fakeDNS{}, func(c *egress.Config) { c.HeaderTimeout = 300 * time.Millisecond })
	c, done := dialProxy(t, r, "slow")
	defer done()
	io.WriteString(c, "GET http://app.test/ HTTP/1.1\r\nHost: app.test\r\n")
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, err := io.WriteString(c, "X-Slow: 1\r\n"); err != nil {
			break
		}
		buf := make([]byte, 1)
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(buf); err != nil && !isTimeout(err) {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the slow client is still connected after 30s")
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// 1,000 concurrent connections from one command: the session's bound
// holds (the rest get 503), and when the command is done every
// connection and goroutine is gone.
func TestThousandConnectionsFromOneCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(srv.Close)
	p := serverPort(srv)
	r := newRig(t, []string{"app.test", "127.0.0.1:" + p}, fakeDNS{"app.test": loopback}, func(c *egress.Config) { c.MaxConns = 100 })
	before := runtime.NumGoroutine()
	dir, done, err := r.gw.Route("s1", "flood")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	okTunnels, busy := 0, 0
	for range 1000 {
		c, err := net.Dial("unix", filepath.Join(dir, egress.SocketName))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "CONNECT app.test:%s HTTP/1.1\r\nHost: app.test:%s\r\n\r\n", p, p)
	}
	for _, c := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		switch {
		case err != nil:
			t.Fatalf("reading: %v", err)
		case resp.StatusCode == 200:
			okTunnels++
		case resp.StatusCode == 503:
			busy++
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if okTunnels != 100 || busy != 900 {
		t.Errorf("%d tunnels, %d refused as busy; want 100 and 900", okTunnels, busy)
	}
	done()
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the command, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

package egress_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/egress"
)

// fakeDNS answers from a table: the one boundary tests replace, so that
// names used in tests (and a rebinding one) reach only loopback.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

// attempts records what the gateway told.
type attempts struct {
	mu  sync.Mutex
	got []egress.Attempt
}

func (a *attempts) add(x egress.Attempt) { a.mu.Lock(); a.got = append(a.got, x); a.mu.Unlock() }
func (a *attempts) list() []egress.Attempt {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]egress.Attempt(nil), a.got...)
}

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) EgressRequest(d string) { c.mu.Lock(); c.n[d]++; c.mu.Unlock() }
func (c *counter) get(d string) int       { c.mu.Lock(); defer c.mu.Unlock(); return c.n[d] }

// rig is a gateway with a fixed allow list per test.
type rig struct {
	gw      *egress.Gateway
	told    *attempts
	metrics *counter
}

func newRig(t testing.TB, allow []string, dns fakeDNS, tune func(*egress.Config)) *rig {
	t.Helper()
	pol, err := egress.NewPolicy(allow, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{told: &attempts{}, metrics: &counter{n: map[string]int{}}}
	cfg := egress.Config{
		Policy:   func(string) (egress.Policy, error) { return pol, nil },
		Refused:  r.told.add,
		Resolver: dns,
		Metrics:  r.metrics,
	}
	if tune != nil {
		tune(&cfg)
	}
	if r.gw, err = egress.New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.gw.Close() })
	return r
}

// sandboxed is a real workspace whose commands reach out through r's proxy.
func (r *rig) sandboxed(t testing.TB) *workspace.Workspace {
	t.Helper()
	testenv.Need(t, "bwrap")
	m, err := workspace.NewManager(workspace.Config{Root: t.TempDir(), Sandbox: "bwrap", Network: r.gw})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := m.Open("s1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func bash(t testing.TB, ws *workspace.Workspace, cmd string) workspace.BashResult {
	t.Helper()
	res, err := ws.Bash(context.Background(), cmd, workspace.BashOptions{Timeout: workspace.MaxBashTimeout})
	if err != nil {
		t.Fatalf("bash %q: %v", cmd, err)
	}
	return res
}

// tlsServer serves h over TLS with httptest's certificate (valid for
// example.com and 127.0.0.1) and writes its CA into dir for the clients.
func tlsServer(t testing.TB, h http.Handler, dir string) (srv *httptest.Server, port, caFile string) {
	t.Helper()
	srv = httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{NextProtos: []string{"http/1.1"}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(dir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return srv, port, caFile
}

func hello(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello from %s%s\n", r.Host, r.URL.Path)
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}

package egress_test

import (
	"context"

	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace"
)

// curl inside the real sandbox reaches an allowed host over TLS (CONNECT)
// and plain HTTP (absolute-form), and gets a 403 naming the host for a
// refused one, told once to the thread.
func TestCurlThroughTheProxy(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(plain.Close)
	plainPort := plain.Listener.Addr().String()[strings.LastIndex(plain.Listener.Addr().String(), ":")+1:]
	dns := fakeDNS{"example.com": loopback, "plain.test": loopback, "other.test": loopback}
	rr := newRig(t, []string{"example.com", "plain.test", "127.0.0.1"}, dns, nil)
	ws := rr.sandboxed(t)
	_, port, _ := tlsServer(t, http.HandlerFunc(hello), ws.Dir())

	res := bash(t, ws, "curl -sS --cacert ca.pem https://example.com:"+port+"/tls")
	mustContain(t, "https through CONNECT", res.Output, "hello from example.com:"+port+"/tls")
	if res.ExitCode != 0 {
		t.Fatalf("curl over https: %s", res)
	}
	res = bash(t, ws, "curl -sS http://plain.test:"+plainPort+"/plain")
	mustContain(t, "plain http", res.Output, "hello from plain.test:"+plainPort+"/plain")

	for range 2 {
		res = bash(t, ws, "curl -sS -o /dev/null -w '%{http_code}' -x $HTTPS_PROXY http://other.test:"+plainPort+"/; echo; curl -sS http://other.test:"+plainPort+"/")
		mustContain(t, "refused host", res.Output, "403", "h9 refused other.test:"+plainPort, `add "other.test:`+plainPort+`" to the repository's network: allow: list`)
	}
	got := rr.told.list()
	if len(got) != 1 || got[0].HostPort != "other.test:"+plainPort || got[0].SessionID != "s1" || !strings.Contains(got[0].Command, "curl") {
		t.Errorf("told %+v, want other.test:%s once for s1's curl", got, plainPort)
	}
}

// Plan mode never has network, allow list or not: no proxy variables, no
// forwarder, no socket.
func TestPlanModeHasNoNetwork(t *testing.T) {
	r := newRig(t, []string{"example.com", "127.0.0.1"}, fakeDNS{"example.com": loopback}, nil)
	ws := r.sandboxed(t)
	res, err := ws.Bash(context.Background(), "env | grep -i _proxy; ls /.h9 2>&1; exec 3<>/dev/tcp/127.0.0.1/3128 && echo CONNECTED", workspace.BashOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, "CONNECTED") || strings.Contains(res.Output, "PROXY=") || strings.Contains(res.Output, "egress") {
		t.Errorf("plan mode reached the proxy: %s", res)
	}
}

// The thread is told the words of the process that tried, not the whole
// command line: the forwarder finds it through the sandbox's /proc.
func TestRefusalNamesTheProcessThatTried(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(plain.Close)
	port := serverPort(plain)
	rr := newRig(t, []string{"127.0.0.1"}, fakeDNS{"other.test": loopback}, nil)
	ws := rr.sandboxed(t)
	bash(t, ws, "true && cd . && curl -sS -m 20 http://other.test:"+port+"/x | cat")
	got := rr.told.list()
	if len(got) != 1 || got[0].Command != "curl -sS -m 20 http://other.test:"+port+"/x" {
		t.Errorf("told %+v, want curl's own words", got)
	}
}

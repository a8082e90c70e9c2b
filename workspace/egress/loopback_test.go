package egress_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// An allow entry naming a loopback address and port (a registry mirror on
// the host, a test server) is reachable at that address inside the
// sandbox, over plain HTTP and TLS, for curl, wget and git alike, although
// NO_PROXY sends clients to the namespace's own loopback: the forwarder
// listens there and relays through the proxy. A loopback port the list
// does not name stays refused, and a server the command starts on its own
// loopback is still reached directly.
func TestLoopbackEntryReachableAtItsOwnAddress(t *testing.T) {
	testenv.Need(t, "bwrap", "curl", "git")
	repos := t.TempDir()
	gitRepo(t, repos, "r.git", "README", "from the host's mirror\n")
	if err := os.WriteFile(filepath.Join(repos, "hello.txt"), []byte("hello over loopback\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(http.FileServer(http.Dir(repos)))
	t.Cleanup(plain.Close)
	refused := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(refused.Close)
	plainPort, refusedPort := serverPort(plain), serverPort(refused)

	// The TLS server's port is known only once it listens, and its CA goes
	// into the workspace: the rig is built around both.
	tlsDir := t.TempDir()
	_, tlsPort, ca := tlsServer(t, http.HandlerFunc(hello), tlsDir)
	r := newRig(t, []string{"127.0.0.1:" + plainPort, "127.0.0.1:" + tlsPort}, fakeDNS{}, nil)
	ws := r.sandboxed(t)
	if raw, err := os.ReadFile(ca); err != nil || os.WriteFile(filepath.Join(ws.Dir(), "ca.pem"), raw, 0o644) != nil {
		t.Fatalf("copying the CA: %v", err)
	}

	res := bash(t, ws, "curl -sS http://127.0.0.1:"+plainPort+"/hello.txt")
	mustContain(t, "curl over http", res.Output, "hello over loopback")
	res = bash(t, ws, "curl -sS --cacert ca.pem https://127.0.0.1:"+tlsPort+"/tls")
	mustContain(t, "curl over https", res.Output, "hello from 127.0.0.1:"+tlsPort+"/tls")
	res = bash(t, ws, "git clone -q http://127.0.0.1:"+plainPort+"/r.git out && cat out/README")
	mustContain(t, "git clone over http", res.Output, "from the host's mirror")
	if _, err := exec.LookPath("wget"); err == nil || testenv.InCI() {
		res = bash(t, ws, "wget -qO- http://127.0.0.1:"+plainPort+"/hello.txt")
		mustContain(t, "wget over http", res.Output, "hello over loopback")
	}

	res = bash(t, ws, "curl -sS -o /dev/null -w '%{http_code}\\n' --noproxy '' -x $HTTP_PROXY http://127.0.0.1:"+refusedPort+"/; curl -sS http://127.0.0.1:"+refusedPort+"/ || echo DIRECT-FAILED")
	mustContain(t, "a loopback port not on the list", res.Output, "403", "DIRECT-FAILED")
	if strings.Contains(res.Output, "hello from") {
		t.Errorf("a loopback port not on the list was reached: %s", res)
	}

	own := `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 8766, Listen => 1, ReuseAddr => 1) or die "listen: $!"; $c = $s->accept; <$c>; print $c "HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nown server\r\n"; close $c' &
for i in $(seq 100); do curl -sS http://127.0.0.1:8766/ 2>/dev/null && break; sleep 0.05; done; wait`
	res = bash(t, ws, own)
	mustContain(t, "the namespace's own loopback server", res.Output, "own server")
}

// gitRepo makes a bare repository under dir holding one file, served by
// the dumb HTTP protocol (plain files).
func gitRepo(t testing.TB, dir, name, file, content string) {
	t.Helper()
	src := t.TempDir()
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(src, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(src, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	run(src, "add", ".")
	run(src, "commit", "-qm", "first")
	run(dir, "clone", "-q", "--bare", src, filepath.Join(dir, name))
	run(filepath.Join(dir, name), "update-server-info")
}

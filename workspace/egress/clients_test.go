package egress_test

import (
	"archive/zip"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git clones over https through the proxy, with the test CA.
func TestGitOverHTTPS(t *testing.T) {
	r := newRig(t, []string{"git.example.com", "127.0.0.1"}, fakeDNS{"git.example.com": loopback}, nil)
	ws := r.sandboxed(t)
	repos := t.TempDir()
	bare := filepath.Join(repos, "r.git")
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
	os.WriteFile(filepath.Join(src, "README"), []byte("through the proxy\n"), 0o644)
	run(src, "add", ".")
	run(src, "commit", "-qm", "first")
	run(repos, "clone", "-q", "--bare", src, bare)
	run(bare, "update-server-info") // the dumb HTTP protocol: plain files
	_, port, _ := tlsServer(t, http.FileServer(http.Dir(repos)), ws.Dir())
	res := bash(t, ws, "GIT_SSL_CAINFO=$PWD/ca.pem git clone -q https://git.example.com:"+port+"/r.git out && cat out/README")
	if res.ExitCode != 0 || !strings.Contains(res.Output, "through the proxy") {
		t.Fatalf("git clone over https: %s", res)
	}
}

// go mod download fetches a module from a module proxy over https.
func TestGoModDownload(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	r := newRig(t, []string{"goproxy.example.com", "127.0.0.1"}, fakeDNS{"goproxy.example.com": loopback}, nil)
	ws := r.sandboxed(t)
	mod := "example.com/hello"
	files := map[string]string{
		"/" + mod + "/@v/list":        "v1.0.0\n",
		"/" + mod + "/@v/v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"/" + mod + "/@v/v1.0.0.mod":  "module " + mod + "\n",
		"/" + mod + "/@v/v1.0.0.zip":  moduleZip(t, mod+"@v1.0.0", map[string]string{"go.mod": "module " + mod + "\n", "hello.go": "package hello\n\nconst Hi = \"hi\"\n"}),
	}
	_, port, _ := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}), ws.Dir())
	os.WriteFile(filepath.Join(ws.Dir(), "go.mod"), []byte("module m\n\ngo 1.21\n\nrequire "+mod+" v1.0.0\n"), 0o644)
	cmd := "export SSL_CERT_FILE=$PWD/ca.pem GOPROXY=https://goproxy.example.com:" + port + " GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=-mod=mod; " +
		goBin + " mod download -json " + mod + "@v1.0.0"
	res := bash(t, ws, cmd)
	if res.ExitCode != 0 || !strings.Contains(res.Output, `"Version": "v1.0.0"`) {
		t.Fatalf("go mod download: %s", res)
	}
}

func moduleZip(t testing.TB, prefix string, files map[string]string) string {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(prefix + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// One command opens 1,000 connections at once (bash's /dev/tcp): the
// session's bound holds, and the proxy is empty afterwards.
func TestThousandConnectionsInsideTheSandbox(t *testing.T) {
	r := newRig(t, []string{"app.test"}, fakeDNS{"app.test": loopback}, nil)
	ws := r.sandboxed(t)
	res := bash(t, ws, `ulimit -n 4096; n=0; for i in $(seq 1000); do exec {fd}<>/dev/tcp/127.0.0.1/3128 && n=$((n+1)); done; echo "open $n"`)
	if !strings.Contains(res.Output, "open 1000") {
		t.Fatalf("want 1000 connections open at once: %s", res)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// The real binary with a repository that allows one loopback server and
// has a setup secret: the agent's curl reaches that server through h9's
// proxy and gets a 403 naming the other; setup got the secret, the agent's
// command did not, and nothing the model read shows its value.
func TestBinaryNetworkAndSetupSecret(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skipf("bwrap not installed (apt-get install bubblewrap): %v", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello through h9") }))
	t.Cleanup(allowed.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the refused server was reached") }))
	t.Cleanup(other.Close)
	a, o := strings.TrimPrefix(allowed.URL, "http://"), strings.TrimPrefix(other.URL, "http://")
	const token = "npm_binenv-secret-4f2a9c"
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+bareRepo(t)+"\n    setup: echo \"//r/:_authToken=$NPM_TOKEN\" > .npmrc\n"+
		"    secrets: [NPM_TOKEN]\n    network:\n      allow: [\""+a+"\"]\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=bwrap", "H9_REPOS_FILE="+file, "NPM_TOKEN="+token)
	e.start()
	cmd := fmt.Sprintf(`curl -sS --noproxy '' http://%s/ok; curl -sS --noproxy '' http://%s/no; echo "env:[$NPM_TOKEN]"; cat .npmrc`, a, o)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", string(args)),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Fetched."),
	)
	thread := e.slash("run [repo=backend] fetch it")
	e.waitMsg(thread, "h9_push_branch", 1)
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", e.cmd.Process.Pid))
	e.stop()
	var seen strings.Builder
	for _, r := range e.model.Requests() {
		data, _ := json.Marshal(r.Messages)
		seen.Write(data)
	}
	for _, want := range []string{"hello through h9", "h9 refused " + o, "env:[]", "_authToken=[REDACTED:NPM_TOKEN]"} {
		if !strings.Contains(seen.String(), want) {
			t.Errorf("the model did not read %q in:\n%s", want, seen.String())
		}
	}
	if strings.Contains(seen.String(), token) || strings.Contains(string(environ), token) || strings.Contains(e.logs.String(), token) {
		t.Error("the setup secret reached the model, h9's environment image or the logs")
	}
	if !strings.Contains(e.logs.String(), "refused by the network allow list") {
		t.Error("the refusal is not logged")
	}
}

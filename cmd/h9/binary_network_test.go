package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent/fakemodel"
)

// The real binary with a repository that allows one loopback server and
// has a setup secret: the agent's curl reaches that server through h9's
// proxy and gets a 403 naming the other; setup got the secret, the agent's
// command did not, and nothing the model read shows its value.
func TestBinaryNetworkAndSetupSecret(t *testing.T) {
	testenv.Need(t, "bwrap", "curl")
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello through h9") }))
	t.Cleanup(allowed.Close)
	var allowedOther atomic.Bool // set once the thread allowed it
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowedOther.Load() {
			t.Error("the refused server was reached")
		}
		fmt.Fprintln(w, "other, now allowed")
	}))
	t.Cleanup(other.Close)
	third := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("the third server was reached") }))
	t.Cleanup(third.Close)
	a, o, p := strings.TrimPrefix(allowed.URL, "http://"), strings.TrimPrefix(other.URL, "http://"), strings.TrimPrefix(third.URL, "http://")
	const token = "npm_binenv-secret-4f2a9c"
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+bareRepo(t)+"\n    setup: echo \"//r/:_authToken=$NPM_TOKEN\" > .npmrc\n"+
		"    secrets: [NPM_TOKEN]\n    network:\n      allow: [\""+a+"\"]\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=bwrap", "H9_REPOS_FILE="+file, "NPM_TOKEN="+token)
	e.start()
	cmd := fmt.Sprintf(`curl -sS --noproxy '' http://%s/ok; curl -sS --noproxy '' http://%s/no; curl -sS --noproxy '' http://%s/no; echo "env:[$NPM_TOKEN]"; cat .npmrc`, a, o, p)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:in_progress")),
		fakemodel.ToolCall("bash", string(args)),
		fakemodel.ToolCall("todo_write", fakemodel.TodoArgs("a:completed")),
		fakemodel.Text("Fetched."),
	)
	thread := e.slash("run [repo=backend] fetch it")
	e.waitMsg(thread, "h9_push_branch", 1)
	ask := e.waitMsg(thread, "tried to reach `"+o+"`, which is not allowed", 1)
	if !strings.Contains(string(ask.Blocks), "Allow for backend") {
		t.Errorf("the thread's message about %s: %s", o, ask.Blocks)
	}
	allowedOther.Store(true)
	e.click(ask.TS, "h9_net_allow_session")
	e.waitMsg(thread, "Allowed by <@U1> for this session", 1)
	e.curlInThread(thread, "http://"+o+"/now", "Fetched the other.")
	e.waitMsg(thread, "tried to reach `"+p+"`", 1)
	// After a restart the proxy is new, but the thread was told of p.
	e.restart()
	e.curlInThread(thread, "http://"+p+"/again", "Refused again.")
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", e.cmd.Process.Pid))
	e.stop()
	var seen strings.Builder
	for _, r := range e.model.Requests() {
		data, _ := json.Marshal(r.Messages)
		seen.Write(data)
	}
	for _, want := range []string{"hello through h9", "h9 refused " + o, "env:[]", "_authToken=[REDACTED:NPM_TOKEN]", "other, now allowed", "allowed your commands to reach `" + o + "`"} {
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
	if n, m := len(e.msgs(thread, "tried to reach `"+o+"`")), len(e.msgs(thread, "tried to reach `"+p+"`")); n != 1 || m != 1 {
		t.Errorf("the thread was told of %s %d times and of %s %d times, want once each", o, n, p, m)
	}
}

// curlInThread replies in thread so that the next run curls url and
// answers done, and waits for that answer.
func (e *binEnv) curlInThread(thread, url, done string) {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": "curl -sS --noproxy '' " + url})
	e.model.Enqueue(fakemodel.ToolCall("bash", string(args)), fakemodel.Text(done))
	if _, err := e.slack.PostUserMessage(e.ctx, "U1", "C1", thread, "curl "+url); err != nil {
		e.t.Fatal(err)
	}
	e.waitMsg(thread, done, 1)
}

package main

import (
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
)

// Two replicas on one data directory and one repository: a session on
// each at once (both processes use the one repository cache), then the
// replica in the middle of its session is killed. The survivor finishes
// that session and makes its outcome once, with one diff upload, and its
// Push branch lands the branch from the survivor.
func TestFleetBinaryRepositorySessions(t *testing.T) {
	remote := bareRepo(t)
	f := newFleetBin(t, "H9_REPOS=backend="+remote)
	var waiting, killed atomic.Bool
	f.model.SetHandler(func(req openai.ChatCompletionRequest) fakemodel.Reply {
		return repoTaskScript(req, &waiting, &killed)
	})
	f.start("r1")
	f.start("r2")
	f.slack.Prefer("r1")
	x := f.slash("run [repo=backend] write x")
	f.slack.Prefer("r2")
	y := f.slash("run [repo=backend] write y")
	f.waitFor("x's run waiting for its model answer on r1", waiting.Load)
	f.slack.Prefer("")
	killed.Store(true)
	f.signal("r1", syscall.SIGKILL)

	for _, th := range []string{x, y} {
		file := map[string]string{x: "x.txt", y: "y.txt"}[th]
		outcome := f.waitMsg(th, "h9_push_branch", 1)
		if !strings.Contains(string(outcome.Blocks), file) {
			t.Errorf("the outcome of %s lacks %s: %s", th, file, outcome.Blocks)
		}
		f.waitChecklist(th, "1/1 tasks", "done")
		branch := f.branchOf(th)
		f.waitFor("the diff of "+branch, func() bool { return f.uploads(branch) == 1 })
	}
	f.checkThread(x, restartedWords, "h9_push_branch")
	f.checkThread(y, "h9_push_branch")

	outcome := f.msgs(x, "h9_push_branch")[0]
	if _, err := f.slack.ClickButton(f.ctx, "U1", "C1", outcome.TS, "h9_push_branch"); err != nil {
		t.Fatal(err)
	}
	branch := f.branchOf(x)
	pushed := f.waitMsg(x, "Pushed `"+branch+"`", 1)
	if out, err := exec.Command("git", "-C", remote, "rev-parse", "--verify", "refs/heads/"+branch).CombinedOutput(); err != nil {
		t.Errorf("the remote has no %s after the push: %v %s", branch, err, out)
	}
	for _, c := range f.slack.Calls("chat.postMessage") {
		if strings.Contains(c.Params["text"], "Pushed") && c.Replica != "r2" {
			t.Errorf("the push's result %q came from %s", pushed.Text, c.Replica)
		}
	}
	for _, th := range []string{x, y} {
		if n := f.uploads(f.branchOf(th)); n != 1 {
			t.Errorf("%d diff uploads in %s, want 1", n, th)
		}
	}
}

// repoTaskScript is a session's run from its history: start its todo,
// write its file, complete it, finish. Session x's completion waits
// (waiting) until its replica was killed, so the kill lands mid-run.
func repoTaskScript(req openai.ChatCompletionRequest, waiting, killed *atomic.Bool) fakemodel.Reply {
	task, steps := "", 0
	for _, m := range req.Messages {
		switch {
		case m.Role == openai.ChatMessageRoleUser && task == "":
			task = m.Content
		case m.Role == openai.ChatMessageRoleTool:
			steps++
		}
	}
	file := strings.TrimPrefix(task, "write ") + ".txt"
	switch steps {
	case 0:
		return fakemodel.ToolCall("todo_write", todoArgs("a:in_progress"))
	case 1:
		return fakemodel.ToolCall("write_file", `{"path":"`+file+`","content":"`+file+`\n"}`)
	case 2:
		if file == "x.txt" && !killed.Load() {
			waiting.Store(true)
			return blocked()
		}
		return fakemodel.ToolCall("todo_write", todoArgs("a:completed"))
	}
	return fakemodel.Text("Wrote " + file + ".")
}

var branchRE = regexp.MustCompile(`h9/[a-z0-9-]+`)

// branchOf is the session branch the root message of thread names.
func (f *fleetBin) branchOf(thread string) string {
	f.t.Helper()
	root, _ := f.slack.Message("C1", thread)
	b := branchRE.FindString(root.Text)
	if b == "" {
		f.t.Fatalf("the root message %q names no branch", root.Text)
	}
	return b
}

// uploads counts the diff files of branch shared in the channel.
func (f *fleetBin) uploads(branch string) int {
	n := 0
	for _, file := range f.slack.Files("C1") {
		if file.Name == strings.ReplaceAll(branch, "/", "-")+".diff" {
			n++
		}
	}
	return n
}

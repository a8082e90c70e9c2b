package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// With follow_up: auto, feedback that comes while the session's own run
// goes on waits for it (its message says so), and once that run ends h9
// starts addressing it by itself, once: the batch message turns to "has
// started addressing it", the work is pushed and answered on the forge.
func TestFollowAutoAddressesFeedbackThatCameDuringARun(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newFollowEnv(t, gitrepo.FollowAuto)
	thread, _, _ := e.openFollowed()
	e.github.SetPermission("alice", "write")
	gate := e.scriptGatedRunThenRename() // the user's run goes on until the batch has come
	e.reply(testUser, thread, "check the logs")
	e.waitChecklist(thread, "*Now:* `bash:")
	e.github.AddComment("acme/backend", 1, "alice", "Rename it.")
	batch := e.waitBatch(thread, "Rename it.", "once it ends, h9 starts addressing this")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, "Checked the logs.", 1)
	e.waitFor("the batch's addressing run", func() bool { return strings.Contains(e.lastUserMessage(-1), "Rename it.") })
	e.waitFor("the batch message saying the work started", func() bool {
		m, _ := e.slack.Message(testChannel, batch.TS)
		return strings.Contains(blocksText(m), "has started addressing it") && !strings.Contains(blocksText(m), render.ActionAddressFeedback)
	})
	e.waitMessage(thread, "Answered on PR #1", 1)
	if w := e.github.Written("acme/backend", 1); len(w) != 1 {
		t.Errorf("h9 wrote %d answers on the request, want one summary: %+v", len(w), w)
	}
	if n := len(e.botMessages(thread, render.ActionAddressFeedback)); n != 0 {
		t.Errorf("%d batch messages still offer Address feedback", n)
	}
}

// scriptGatedRunThenRename scripts the user's run, a bash command that
// waits for the returned file to exist, then "Checked the logs.", and
// after it the addressing run: a write and "Renamed it.".
func (e *env) scriptGatedRunThenRename() (gate string) {
	gate = filepath.Join(e.t.TempDir(), "go-on")
	e.model.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"while [ ! -f `+gate+` ]; do sleep 0.05; done"}`),
		fakemodel.Text("Checked the logs."),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`),
		fakemodel.Text("Renamed it."),
	)
	return gate
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/h9test"
)

// Following through the real binary and its settings: the pull request h9
// opened is read every H9_FORGE_POLL (its floor, 10s); a writer's inline
// comment comes to the thread as one batch, Address feedback runs, pushes
// and answers on the fake GitHub.
func TestBinaryFollowsItsPullRequest(t *testing.T) {
	remote := bareRepo(t)
	gh := h9test.GitHub(t, binGitHubToken, "acme/backend", remote)
	gh.SetPermission("alice", "write")
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+remote+"\n    github: acme/backend\n    follow_up: ask\n"), 0o600)
	e := newBinEnv(t, "H9_REPOS_FILE="+file, "H9_GITHUB_TOKEN="+binGitHubToken, "H9_GITHUB_API_URL="+gh.URL(), "H9_FORGE_POLL=10s")
	e.start()
	e.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`), fakemodel.Text("Said hello."))
	thread := e.slash("run [repo=backend] say hello in a file")
	outcome := e.waitMsg(thread, "h9_open_pr", 1)
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", outcome.TS, "h9_open_pr"); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "h9 follows PR #1 now", 1)
	inline := gh.AddInline("acme/backend", 1, "alice", "hello.txt", 1, "@@ -0,0 +1 @@\n+hello", "Say hello world.", 0)
	batch := e.waitMsg(thread, "PR #1: 1 review comment from @alice", 1)
	e.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello world\n"}`), fakemodel.Text("Now hello world."))
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", batch.TS, "h9_address_feedback"); err != nil {
		t.Fatal(err)
	}
	e.waitMsg(thread, "Answered on PR #1", 1)
	w := gh.Written("acme/backend", 1)
	if len(w) != 2 || w[0].InReplyTo != inline || !strings.HasPrefix(w[0].Body, "Addressed in ") || !strings.Contains(w[1].Body, "Now hello world.") {
		t.Errorf("h9 wrote %+v", w)
	}
	e.stop()
}

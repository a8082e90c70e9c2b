package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// Following a pull request on the fake Gitea through the same seam: a
// writer's inline comment is one batch (PR #1); Address feedback pushes,
// replies to the comment and adds one summary comment; closing ends
// following.
func TestFollowGiteaPullRequest(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	gt := fakegitea.New(testGiteaToken)
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/backend", remote, true)
	gt.EnableReplies()
	gt.SetPermission("alice", "write")
	e := prepareEnv(t, data, func(c *Config) { c.Forges, c.ForgePoll = c.Repos.(Forges), testPoll })
	e.logs = &syncBuffer{}
	e.repos = reposFor(t, data, gitrepo.Config{
		Repos: []gitrepo.Repo{{Name: "backend", URL: gt.GitURL("acme/backend"),
			Forge: &gitrepo.ForgeConfig{Type: "gitea", Project: "acme/backend", API: gt.URL()}}},
		Tokens: map[string]string{"H9_GITEA_TOKEN": testGiteaToken},
	})
	e.start()
	re := &repoEnv{env: e}

	e.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Added a greeting.")...)
	thread := e.startSession("run", "[repo=backend] add a greeting")
	outcome := e.waitMessage(thread, render.ActionOpenPR, 1)
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	e.waitMessage(thread, "h9 follows PR #1 now", 1)
	gt.AddInline("acme/backend", 1, "alice", "hello.txt", 1, "@@ -0,0 +1 @@\n+hello", "Say hi instead.", 0)
	batch := re.waitBatch(thread, "PR #1: 1 review comment from @alice")
	e.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`), fakemodel.Text("Said hi."))
	e.click(testUser, batch.TS, render.ActionAddressFeedback)
	e.waitMessage(thread, "Answered on PR #1", 1)
	var replies, summaries int
	for _, c := range gt.ReviewComments("acme/backend", 1) {
		if c.Author == gt.Login() && strings.HasPrefix(c.Body, "Addressed in ") && c.Path == "hello.txt" {
			replies++
		}
	}
	for _, c := range gt.Comments("acme/backend", 1) {
		if c.Author == gt.Login() && strings.Contains(c.Body, "h9 addressed 1 comment") {
			summaries++
		}
	}
	if replies != 1 || summaries != 1 {
		t.Errorf("h9 wrote %d replies and %d summaries: %+v %+v", replies, summaries, gt.ReviewComments("acme/backend", 1), gt.Comments("acme/backend", 1))
	}
	gt.ClosePull("acme/backend", 1, "bob")
	e.waitMessage(thread, "PR #1 was closed by @bob", 1)
}

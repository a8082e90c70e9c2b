package bot

import (
	"testing"

	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// In a fleet on PostgreSQL exactly one replica reads a followed request:
// the one holding the session's lease. When it stops, another takes the
// session over and goes on from the stored cursor: a comment made
// meanwhile comes to the thread once, from the new holder.
func TestFleetOneReplicaFollowsARequest(t *testing.T) {
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	gh := h9test.GitHub(t, testGitHubToken, "acme/backend", remote)
	f := newFleetEnvWith(t, func(ws *workspace.Manager, c *Config) {
		r := openRepos(t, data, ws, gitrepo.Config{Repos: []gitrepo.Repo{{Name: "backend", URL: remote, GitHub: "acme/backend"}},
			GitHubToken: testGitHubToken, GitHubAPI: gh.URL()})
		c.Repos, c.Forges, c.ForgePoll = r, r, testPoll
	}, "a", "b")
	f.slack.Prefer("a")
	f.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Added a greeting.")...)
	thread := f.startSession("run", "[repo=backend] add a greeting")
	outcome := f.waitMessage(thread, render.ActionOpenPR, 1)
	f.click(testUser, outcome.TS, render.ActionOpenPR)
	f.waitMessage(thread, "h9 follows PR #1 now", 1)

	a, b := f.replicas["a"].bot, f.replicas["b"].bot
	start, _ := a.ForgeRequests()
	f.waitFor("five polls by a", func() bool { n, _ := a.ForgeRequests(); return n >= start+5*4 })
	if n, _ := b.ForgeRequests(); n != 0 {
		t.Errorf("replica b made %d forge requests while a follows the request", n)
	}

	f.replicas["a"].stop()
	gh.SetPermission("alice", "write")
	gh.AddComment("acme/backend", 1, "alice", "Looks good, one nit.")
	f.waitMessage(thread, "PR #1: 1 review comment from @alice", 1)
	if n, _ := b.ForgeRequests(); n == 0 {
		t.Error("the batch came without replica b reading the request")
	}
	if n := f.callsBy("b", "chat.postMessage", thread); n == 0 {
		t.Error("the batch was not posted by the new holder")
	}
	f.checkOneOfEach(thread, "PR #1: 1 review comment", "h9 follows PR #1 now")
}

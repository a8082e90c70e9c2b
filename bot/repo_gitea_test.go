package bot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge/fakegitea"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

const testGiteaToken = "gt_test_token_SECRET_456"

// A session on a Gitea repository (cloned and pushed over HTTP from the
// fake Gitea), through the fake Slack: the outcome offers Open pull
// request; clicking it pushes with the token as x-access-token's password
// and opens one pull request on Gitea, a second click answers the same
// URL; the token reaches neither Slack nor the logs nor the disk.
func TestGiteaRepositorySessionOpensAPullRequest(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	gt := fakegitea.New(testGiteaToken)
	t.Cleanup(gt.Close)
	gt.AddRepo("acme/backend", remote, true)
	e := prepareEnv(t, data)
	e.logs = &syncBuffer{}
	e.repos = reposFor(t, data, gitrepo.Config{
		Repos: []gitrepo.Repo{{Name: "backend", URL: gt.GitURL("acme/backend"),
			Forge: &gitrepo.ForgeConfig{Type: "gitea", Project: "acme/backend", API: gt.URL()}}},
		Tokens: map[string]string{"H9_GITEA_TOKEN": testGiteaToken},
	})
	e.slack.AddUser(testUser, "Ada Lovelace")
	e.start()

	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.Text("Added a greeting."),
	)
	thread := e.startSession("run", "[repo=backend] add a greeting")
	root, _ := e.slack.Message(testChannel, thread)
	branch := branchIn(t, root.Text)
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	if !strings.Contains(blocksText(outcome), render.LabelOpenPR) {
		t.Fatalf("the outcome of a Gitea session lacks %q: %s", render.LabelOpenPR, blocksText(outcome))
	}
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	opened := e.waitMessage(thread, "Opened the pull request", 1)
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	again := e.waitMessage(thread, "already open", 1)
	url := urlIn(t, opened.Text)
	if !strings.HasPrefix(url, gt.WebURL()+"/acme/backend/pulls/1") || !strings.Contains(again.Text, url) {
		t.Errorf("opened %q, again %q", opened.Text, again.Text)
	}
	pulls := gt.Pulls("acme/backend")
	if len(pulls) != 1 || pulls[0].Head != branch || pulls[0].Base != "main" || pulls[0].Title != "add a greeting" ||
		!strings.Contains(pulls[0].Body, "- [x] task a") {
		t.Fatalf("pull requests on Gitea: %+v", pulls)
	}
	if got := runGit(t, remote, "log", "-1", "--format=%s", branch); got != "add a greeting" && got != "task a" {
		t.Errorf("the pushed branch ends with %q", got)
	}
	if users := gt.GitUsers(); len(users) == 0 || slices.IndexFunc(users, func(u string) bool { return u != "x-access-token" }) >= 0 {
		t.Errorf("git authenticated as %v, want x-access-token with the token", users)
	}
	for _, r := range e.slack.Received() {
		if strings.Contains(r, testGiteaToken) {
			t.Errorf("the Gitea token went to Slack: %s", render.Truncate(r, 200))
		}
	}
	if strings.Contains(e.logs.String(), testGiteaToken) {
		t.Error("the Gitea token is in the logs")
	}
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), testGiteaToken) {
				t.Errorf("the Gitea token is written in %s", p)
			}
		}
		return nil
	})
}

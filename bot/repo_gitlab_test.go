package bot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge/fakegitlab"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

const testGitLabToken = "glpat-test-token-SECRET-456"

// A repository on GitLab (a project in a subgroup, cloned and pushed
// over HTTP from the fake GitLab): the outcome offers Open merge request;
// clicking it pushes with the token as oauth2's password and opens one
// merge request, a second click finds the same one. The token is
// nowhere it must not be.
func TestGitLabSessionOpensAMergeRequest(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	runGit(t, remote, "config", "http.receivepack", "true")
	gl := fakegitlab.New(testGitLabToken)
	t.Cleanup(gl.Close)
	const project = "acme/team/backend"
	gl.AddProject(project, remote, fakegitlab.Developer)
	e := prepareEnv(t, data)
	logs := &syncBuffer{}
	e.logs = logs
	e.repos = reposFor(t, data, gitrepo.Config{
		Repos: []gitrepo.Repo{{Name: "backend", URL: gl.GitURL(project),
			Forge: &gitrepo.ForgeConfig{Type: "gitlab", Project: project, API: gl.URL()}}},
		Tokens: map[string]string{"H9_GITLAB_TOKEN": testGitLabToken},
	})
	e.slack.AddUser(testUser, "Ada Lovelace")
	e.slack.SetEmail(testUser, "ada@example.com")
	e.start()

	e.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Added a greeting.")...)
	thread := e.startSession("run", "[repo=backend] add a greeting")
	root, _ := e.slack.Message(testChannel, thread)
	branch := branchIn(t, root.Text)
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	if text := blocksText(outcome); !strings.Contains(text, render.LabelOpenMR) || strings.Contains(text, render.LabelOpenPR) {
		t.Errorf("the outcome of a GitLab repository must offer %q: %s", render.LabelOpenMR, text)
	}
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	opened := e.waitMessage(thread, "Opened the merge request", 1)
	url := urlIn(t, opened.Text)
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	again := e.waitMessage(thread, "The merge request of", 1)
	if !strings.Contains(again.Text, url) || !strings.Contains(url, "/"+project+"/-/merge_requests/1") {
		t.Errorf("opened at %s, then %q", url, again.Text)
	}
	mrs := gl.MergeRequests(project)
	if len(mrs) != 1 || mrs[0].Source != branch || mrs[0].Target != "main" || mrs[0].Title != "add a greeting" ||
		!strings.Contains(mrs[0].Description, "- [x] task a") || !strings.Contains(mrs[0].Description, "Slack thread: ") {
		t.Fatalf("merge requests = %+v", mrs)
	}
	if got := runGit(t, remote, "log", "-1", "--format=%s", branch); got != "add a greeting" && got != "task a" {
		t.Errorf("the pushed branch ends with %q", got)
	}
	if users := gl.GitUsers(); len(users) == 0 || slices.IndexFunc(users, func(u string) bool { return u != "oauth2" }) >= 0 {
		t.Errorf("git authenticated as %v, want oauth2 with the token", users)
	}
	for _, r := range e.slack.Received() {
		if strings.Contains(r, testGitLabToken) {
			t.Errorf("the token went to Slack: %s", render.Truncate(r, 200))
		}
	}
	if strings.Contains(logs.String(), testGitLabToken) {
		t.Error("the token is in the logs")
	}
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), testGitLabToken) {
				t.Errorf("the token is written in %s", p)
			}
		}
		return nil
	})
}

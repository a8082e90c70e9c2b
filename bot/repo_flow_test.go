package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/testenv"
)

// workReplies is a run that does one todo for real: in progress, a file
// written, completed, then the final words.
func workReplies(id, file, content, final string) []fakemodel.Reply {
	return []fakemodel.Reply{
		fakemodel.ToolCall("todo_write", todos(id+":in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"`+file+`","content":"`+content+`"}`),
		fakemodel.ToolCall("todo_write", todos(id+":completed")),
		fakemodel.Text(final),
	}
}

// The whole way of a session with a repository, through the fake Slack
// and the fake GitHub: the root names the repository and branch; done, the
// outcome lists the files with +/− and carries Push branch and Open pull
// request, and the diff is uploaded into the thread; Push lands the
// branch; Open pull request twice gives one pull request and the same URL;
// a stranger's click is refused; a follow-up continues on the branch and
// a later push updates the pull request. The token is nowhere it must not be.
func TestRepositorySessionEndToEnd(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	// After its last todo the model writes one more file: the outcome commits it too.
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.ToolCall("write_file", `{"path":"NOTES.md","content":"greeting added\n"}`),
		fakemodel.Text("Added a greeting."),
	)
	thread := e.startSession("run", "[repo=backend] add a greeting")

	root, _ := e.slack.Message(testChannel, thread)
	branch := branchIn(t, root.Text)
	if !strings.Contains(root.Text, "backend") || !strings.HasPrefix(branch, "h9/add-a-greeting-") || strings.Contains(root.Text, "[repo=") {
		t.Errorf("root message %q must name the repository and the branch, without the options", root.Text)
	}
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	for _, want := range []string{"hello.txt", "NOTES.md", "2 files changed* +2 −0", "Added a greeting.", render.LabelPushBranch, render.LabelOpenPR} {
		if !strings.Contains(blocksText(outcome), want) {
			t.Errorf("the outcome lacks %q: %s", want, blocksText(outcome))
		}
	}
	if got := e.lastUserMessage(0); got != "add a greeting" {
		t.Errorf("the model got the task %q, want it without the options block", got)
	}
	diff := e.waitUpload(strings.ReplaceAll(branch, "/", "-")+".diff", 1)
	if !strings.Contains(diff, "+hello") || !strings.Contains(diff, "hello.txt") {
		t.Errorf("uploaded diff:\n%s", diff)
	}
	for _, f := range e.slack.Files(testChannel) {
		if m, _ := e.slack.Message(testChannel, f.MessageTS); f.ThreadTS != thread || !strings.Contains(m.Text, "The whole diff of `"+branch+"`") {
			t.Errorf("the diff %s is shared in %q with %q", f.Name, f.ThreadTS, m.Text)
		}
	}

	first := e.pushAndCheck(outcome, branch)
	url := e.openPullRequestTwice(outcome, branch)

	// A follow-up continues on the same branch; pushing updates the pull request.
	e.model.Enqueue(workReplies("b", "bye.txt", "bye\\n", "Added a farewell.")...)
	e.reply(testUser, thread, "also add a farewell")
	second := e.waitMessage(thread, render.ActionPushBranch, 2)
	if !strings.Contains(blocksText(second), "bye.txt") || !strings.Contains(blocksText(second), url) {
		t.Errorf("the second outcome lacks bye.txt or the pull request: %s", blocksText(second))
	}
	e.click(testUser, second.TS, render.ActionPushBranch)
	pushed := e.waitMessage(thread, "Pushed `"+branch+"`", 2)
	if !strings.Contains(pushed.Text, url) {
		t.Errorf("the push does not say the pull request has it: %q", pushed.Text)
	}
	if now := runGit(t, e.remote, "rev-parse", "refs/heads/"+branch); now == first || runGit(t, e.remote, "merge-base", "--is-ancestor", first, now) != "" {
		t.Errorf("the second push did not continue the branch (%s → %s)", first, now)
	}
	if n := len(e.github.Pulls("acme/backend")); n != 1 {
		t.Errorf("%d pull requests after the follow-up, want the same one", n)
	}
	e.checkTokenNowhere()
}

// pushAndCheck: a stranger's Push is refused; the owner's lands the
// branch, authored by h9 with the trailers. It returns the pushed commit.
func (e *repoEnv) pushAndCheck(outcome fakeslack.Message, branch string) string {
	t := e.t
	t.Helper()
	e.click("U2", outcome.TS, render.ActionPushBranch)
	e.waitEphemeral(testChannel, "U2", "Only <@"+testUser+">")
	e.click(testUser, outcome.TS, render.ActionPushBranch)
	e.waitMessage(outcome.ThreadTS, "Pushed `"+branch+"`", 1)
	// The todo's checkpoint, then the outcome's commit of what came after.
	if subjects := runGit(t, e.remote, "log", "-2", "--format=%s", branch); subjects != "add a greeting\ntask a" {
		t.Errorf("the pushed branch's last commits are %q, want the outcome's then the todo's checkpoint", subjects)
	}
	msg := runGit(t, e.remote, "log", "-1", "--format=%an|%B", branch+"~1")
	for _, want := range []string{"h9|task a", "H9-Session: ", "Co-authored-by: Ada Lovelace <ada@example.com>"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the checkpoint %q lacks %q", msg, want)
		}
	}
	short := runGit(t, e.remote, "rev-parse", "--short", branch+"~1")
	e.waitChecklist(outcome.ThreadTS, short+" +1 −0")
	return runGit(t, e.remote, "rev-parse", "refs/heads/"+branch)
}

// openPullRequestTwice: one pull request, the same URL both times, with
// the task as title and the checklist and the thread's link as body.
func (e *repoEnv) openPullRequestTwice(outcome fakeslack.Message, branch string) string {
	t := e.t
	t.Helper()
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	opened := e.waitMessage(outcome.ThreadTS, "Opened the pull request", 1)
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	again := e.waitMessage(outcome.ThreadTS, "already open", 1)
	url := urlIn(t, opened.Text)
	if !strings.Contains(again.Text, url) {
		t.Errorf("a second click answered %q, want the same %s", again.Text, url)
	}
	pulls := e.github.Pulls("acme/backend")
	if len(pulls) != 1 || pulls[0].Title != "add a greeting" || pulls[0].Head != branch || pulls[0].Base != "main" ||
		!strings.Contains(pulls[0].Body, "- [x] task a") || !strings.Contains(pulls[0].Body, "Slack thread: ") {
		t.Fatalf("pull requests = %+v", pulls)
	}
	return url
}

// checkTokenNowhere: the GitHub token is in no Slack payload, no log line
// and no file of the data directory (workspaces, caches, the database).
func (e *repoEnv) checkTokenNowhere() {
	t := e.t
	for _, r := range e.slack.Received() {
		if strings.Contains(r, testGitHubToken) {
			t.Errorf("the token went to Slack: %s", render.Truncate(r, 200))
		}
	}
	if strings.Contains(e.logs.String(), testGitHubToken) {
		t.Error("the token is in the logs")
	}
	filepath.Walk(e.data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), testGitHubToken) {
				t.Errorf("the token is written in %s", p)
			}
		}
		return nil
	})
}

// waitUpload waits for the n-th file named name shared in the channel and returns its content.
func (e *env) waitUpload(name string, n int) string {
	e.t.Helper()
	var content string
	e.waitFor("upload #"+itoa(n)+" of "+name, func() bool {
		seen := 0
		for _, f := range e.slack.Files(testChannel) {
			if f.Name == name {
				if seen++; seen == n {
					content = string(f.Content)
					return true
				}
			}
		}
		return false
	})
	return content
}

func branchIn(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "h9/")
	if i < 0 {
		t.Fatalf("no branch in %q", s)
	}
	end := strings.IndexAny(s[i:], " )`")
	if end < 0 {
		return s[i:]
	}
	return s[i : i+end]
}

func urlIn(t *testing.T, s string) string {
	t.Helper()
	i := strings.Index(s, "http")
	if i < 0 {
		t.Fatalf("no URL in %q", s)
	}
	end := strings.IndexAny(s[i:], " \n>")
	if end < 0 {
		return s[i:]
	}
	return s[i : i+end]
}

// The checkpoint a run makes when a todo is completed: a commit of the
// workspace's changes on the session branch, the todo as subject, h9 as
// author, the owner (from users.info) as co-author.
func TestCheckpointerCommitsTheTodo(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	e.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Done.")...)
	thread := e.startSession("run", "[repo=backend] greet")
	e.waitMessage(thread, render.ActionPushBranch, 1)
	rec, err := e.store.FindThread(e.ctx, testChannel, thread)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSession(rec)
	if err != nil {
		t.Fatal(err)
	}
	wsm, err := workspace.NewManager(workspace.Config{Root: e.wsRoot, Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := wsm.Open(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if _, err := ws.WriteFile("more.txt", "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	hook := e.bot.checkpointer(e.bot.log, *s.Repo, s.ID, s.Owner)
	c, err := hook(e.ctx, ws, planning.TodoItem{ID: "b", Content: "Write more", Status: planning.TodoCompleted})
	if err != nil || c == nil || c.Added != 2 || c.Deleted != 0 || len(c.Commit) < 7 {
		t.Fatalf("checkpoint = %+v, %v", c, err)
	}
	msg := runGit(t, ws.Dir(), "log", "-1", "--format=%an <%ae>|%s|%b", c.Commit)
	if !strings.HasPrefix(msg, "h9 <h9@localhost>|Write more|H9-Session: "+s.ID) || !strings.Contains(msg, "Co-authored-by: Ada Lovelace <ada@example.com>") {
		t.Errorf("checkpoint commit: %q", msg)
	}
	if again, err := hook(e.ctx, ws, planning.TodoItem{ID: "c", Content: "Nothing", Status: planning.TodoCompleted}); err != nil || again != nil {
		t.Errorf("a checkpoint with nothing changed = %+v, %v; want none", again, err)
	}
}

package bot

// Black-box checks of the second phase's contract (README's Slack words and
// settings), written from those words only.

import (
	"github.com/h9-app/h9/workspace/testenv"
	"os"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// The options block: `[WIP]` is part of the task; commas and spaces both
// separate pairs; an unknown repo or option is refused listing the valid
// ones and no session starts.
func TestContractOptionsBlock(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	roots := len(e.rootMessages())
	for _, c := range []struct{ cmd, want string }{
		{"run [repo=nope] fix it", "backend"},
		{"run [foo=bar] fix it", "repo"},
		{"plan [repo=backend branch=main colour=red] fix it", "branch"},
	} {
		ack := e.slash(testUser, testChannel, c.cmd)
		if !strings.Contains(string(ack.Payload), c.want) {
			t.Errorf("%q: ack %s does not list %q", c.cmd, ack.Payload, c.want)
		}
	}
	if n := len(e.rootMessages()); n != roots {
		t.Errorf("a refused options block started %d sessions", n-roots)
	}
	if e.model.Calls() != 0 {
		t.Errorf("model called %d times for refused tasks", e.model.Calls())
	}

	// [WIP] is part of the task (the one configured repo is used).
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread := e.startSession("plan", "[WIP] fix x")
	root, _ := e.slack.Message(testChannel, thread)
	if !strings.Contains(root.Text, "[WIP] fix x") {
		t.Errorf("root %q lost [WIP]", root.Text)
	}
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	if got := e.lastUserMessage(0); !strings.Contains(got, "[WIP] fix x") {
		t.Errorf("model got %q, want the task with [WIP]", got)
	}

	// Comma-separated pairs, and "comma space".
	for _, task := range []string{"[repo=backend,branch=main] tidy up", "[repo=backend, branch=main] tidy more"} {
		e.model.Enqueue(planReplies("Plan.", "a:pending")...)
		th := e.startSession("plan", task)
		r, _ := e.slack.Message(testChannel, th)
		if strings.Contains(r.Text, "[repo") || !strings.Contains(r.Text, "backend") || !strings.Contains(r.Text, "h9/") {
			t.Errorf("%q: root %q", task, r.Text)
		}
		cl := e.waitChecklist(th, "h9/")
		if strings.Contains(cl.Text, "[repo") {
			t.Errorf("%q: checklist title keeps the options: %q", task, cl.Text)
		}
		e.waitMessage(th, render.ActionApproveAuto, 1)
	}
}

// `/h9 repo none` beats "the only configured repo"; `/h9 repo` shows it;
// `/h9 repos` lists the configured ones.
func TestContractRepoNone(t *testing.T) {
	e := newRepoEnv(t, "")
	if ack := e.slash(testUser, testChannel, "repos"); !strings.Contains(string(ack.Payload), "backend") {
		t.Errorf("/h9 repos: %s", ack.Payload)
	}
	e.slash(testUser, testChannel, "repo none")
	e.waitEphemeral(testChannel, testUser, "without a repository")
	e.slash(testUser, testChannel, "repo")
	e.waitEphemeral(testChannel, testUser, "/h9 repo none")
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread := e.startSession("plan", "no repo here")
	root, _ := e.slack.Message(testChannel, thread)
	if strings.Contains(root.Text, "backend") || strings.Contains(root.Text, "h9/") {
		t.Errorf("/h9 repo none, yet the root names a repository: %q", root.Text)
	}
	e.waitMessage(thread, render.ActionApproveAuto, 1)
}

// The work rule's error names the todo (its words, as the user sees it)
// and the rule.
func TestContractWorkRuleNamesTheTodo(t *testing.T) {
	e := newEnv(t)
	one := func(status string) string {
		return `{"todos":[{"id":"1","content":"Create hello.txt","status":"` + status + `"}]}`
	}
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", one("in_progress")),
		fakemodel.ToolCall("todo_write", one("completed")),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`),
		fakemodel.ToolCall("todo_write", one("completed")),
		fakemodel.Text("Done it."),
	)
	thread := e.startSession("run", "make hello")
	e.waitMessage(thread, "Done it.", 1)
	var refusal string
	for _, r := range toolResultsOf(e.model.Requests()[2]) {
		if strings.HasPrefix(r, "Error") {
			refusal = r
		}
	}
	if refusal == "" {
		t.Fatal("no refusal")
	}
	t.Logf("refusal: %s", refusal)
	if !strings.Contains(refusal, "Create hello.txt") {
		t.Errorf("the refusal does not name the todo as written (%q): %q", "Create hello.txt", refusal)
	}
	if !strings.Contains(refusal, "todo_write") {
		t.Errorf("the refusal does not state the rule: %q", refusal)
	}
	// The ✔ line names its evidence "in a few words", e.g. `write_file hello.txt`.
	cl := e.waitChecklist(thread, "1/1 tasks")
	t.Logf("checklist text: %q", cl.Text)
	if !strings.Contains(cl.Text, "write_file hello.txt") {
		t.Errorf("the ✔ line does not read `write_file hello.txt`: %q", cl.Text)
	}
}

// Every outcome message carries the final total: the Done of a session
// with a repository, and a stalled one.
func TestContractOutcomesCarryTokens(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "", withPrices(10_000, 20_000))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(100, 10),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`).WithUsage(100, 10),
		fakemodel.ToolCall("todo_write", todos("a:completed")).WithUsage(100, 10),
		fakemodel.Text("Greeted.").WithUsage(100, 10),
	)
	thread := e.startSession("run", "[repo=backend] greet")
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	if want := "440 tokens · $4.80"; !strings.Contains(outcome.Text, want) {
		t.Errorf("the repository outcome %q lacks %q", outcome.Text, want)
	}
	cl := e.waitChecklist(thread, "1/1 tasks", "440 tokens")
	t.Logf("checklist: %q", cl.Text)
	if !strings.Contains(cl.Text, "+1 −0") {
		t.Errorf("the ✔ line lacks the checkpoint's +a −d: %q", cl.Text)
	}
}

// An admin may press the owner's buttons: Raise budget and Push branch.
func TestContractAdminButtons(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "", withBudget(300), func(c *Config) { c.Admins = []string{"UA"} })
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(200, 10),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hello\n"}`).WithUsage(200, 10),
	)
	thread := e.startSession("run", "[repo=backend] greet")
	budget := e.waitMessage(thread, "h9_budget", 1)
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:completed")).WithUsage(50, 5),
		fakemodel.Text("Greeted.").WithUsage(50, 5),
	)
	e.click("UA", budget.TS, render.ActionRaiseBudget)
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	e.click("UA", outcome.TS, render.ActionPushBranch)
	e.waitMessage(thread, "Pushed `", 1)
}

// Raise budget adds the same amount again: a second pass stops again.
func TestContractRaiseTwice(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t, withBudget(300))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(300, 10), // 310 > 300
	)
	thread := e.startSession("run", "spend")
	first := e.waitMessage(thread, "h9_budget", 1)
	e.model.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"echo one"}`).WithUsage(200, 10), // 520 ≤ 600
		fakemodel.ToolCall("bash", `{"command":"echo two"}`).WithUsage(100, 10), // 630 > 600
	)
	e.click(testUser, first.TS, render.ActionRaiseBudget)
	second := e.waitMessage(thread, "h9_budget", 2)
	if !strings.Contains(second.Text, "630 tokens") || !strings.Contains(second.Text, "600") {
		t.Errorf("second budget message: %q", second.Text)
	}
	if got := e.model.Calls(); got != 3 {
		t.Errorf("model calls %d, want 3", got)
	}
}

// Planning counts: a plan run past the budget stops with the budget message.
func TestContractBudgetInPlanning(t *testing.T) {
	e := newEnv(t, withBudget(300))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:pending")).WithUsage(300, 10),
		fakemodel.Text("Plan.").WithUsage(10, 10),
	)
	thread := e.startSession("plan", "plan it")
	e.waitMessage(thread, "h9_budget", 1)
	if got := e.model.Calls(); got != 1 {
		t.Errorf("model calls %d, want 1", got)
	}
	e.waitChecklist(thread, "310 tokens")
}

// Planning past the budget: Raise budget goes on planning, to the review;
// an auto-run stopped by the budget goes on auto-running once raised.
func TestContractBudgetPlanThenAutoRun(t *testing.T) {
	e := newEnv(t, withBudget(300))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:pending", "b:pending")).WithUsage(300, 10), // 310 > 300
	)
	thread := e.startSession("plan", "two things")
	first := e.waitMessage(thread, "h9_budget", 1)
	e.model.Enqueue(fakemodel.Text("Plan: a then b.").WithUsage(10, 10)) // 330 ≤ 600
	e.click(testUser, first.TS, render.ActionRaiseBudget)
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:pending")).WithUsage(100, 10),
		fakemodel.ToolCall("write_file", `{"path":"a.txt","content":"a"}`).WithUsage(100, 10),
		fakemodel.ToolCall("todo_write", todos("a:completed", "b:pending")).WithUsage(100, 10), // 660 > 600
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	second := e.waitMessage(thread, "h9_budget", 2)
	calls := e.model.Calls()
	e.model.Enqueue(
		fakemodel.Text("a is done; b next.").WithUsage(10, 10), // the run's final words
		// auto-run's next run:
		fakemodel.ToolCall("todo_write", todos("a:completed", "b:in_progress")).WithUsage(10, 10),
		fakemodel.ToolCall("write_file", `{"path":"b.txt","content":"b"}`).WithUsage(10, 10),
		fakemodel.ToolCall("todo_write", todos("a:completed", "b:completed")).WithUsage(10, 10),
		fakemodel.Text("All done.").WithUsage(10, 10),
	)
	e.click(testUser, second.TS, render.ActionRaiseBudget)
	e.waitMessage(thread, "All done.", 1)
	if got := e.model.Calls() - calls; got != 5 {
		t.Errorf("%d model calls after the raise, want 5", got)
	}
	e.waitChecklist(thread, "2/2 tasks")
}

// The agent may use git inside the sandbox, read-only in plan mode.
func TestContractGitInPlanMode(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	e.model.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"git log --oneline && git status --short && git branch --show-current && git diff --stat HEAD"}`),
		fakemodel.ToolCall("todo_write", todos("a:pending")),
		fakemodel.Text("Plan."),
	)
	thread := e.startSession("plan", "[repo=backend] look at the history")
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	res := toolResultsOf(e.model.Requests()[1])
	t.Logf("git in plan mode: %q", res)
	if len(res) == 0 || strings.HasPrefix(res[0], "Error") || !strings.Contains(res[0], "initial") || !strings.Contains(res[0], "h9/") {
		t.Errorf("git in plan mode: %q", res)
	}
}

// What a client reading only a message's text sees: the outcome's files,
// the setup failure's last lines, the repository on a mention's checklist.
func TestContractTextFallbacks(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "for i in 1 2; do echo \"out$i-ERR\"; done; exit 3")
	thread := e.startSession("run", "[repo=backend] build")
	failed := e.waitMessage(thread, "h9_setup_failed", 1)
	t.Logf("setup failure text: %q", failed.Text)
	if !strings.Contains(failed.Text, "out2-ERR") {
		t.Errorf("the setup failure's text lacks its last lines: %q", failed.Text)
	}

	e2 := newRepoEnv(t, "")
	e2.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Greeted.")...)
	th := e2.startSession("run", "[repo=backend] greet")
	outcome := e2.waitMessage(th, render.ActionPushBranch, 1)
	t.Logf("outcome text: %q", outcome.Text)
	if !strings.Contains(outcome.Text, "hello.txt") {
		t.Errorf("the outcome's text does not list the files changed: %q", outcome.Text)
	}

	e2.model.Enqueue(planReplies("Plan.", "a:pending")...)
	ts, err := e2.slack.Mention(e2.ctx, testUser, testChannel, "", "[repo=backend] tidy")
	if err != nil {
		t.Fatal(err)
	}
	e2.waitMessage(ts, render.ActionApproveAuto, 1)
	cl := e2.checklist(ts)
	t.Logf("mention checklist text: %q", cl.Text)
	if !strings.Contains(cl.Text, "backend") || !strings.Contains(cl.Text, "h9/") {
		t.Errorf("a mention's checklist text does not name the repository and branch: %q", cl.Text)
	}
}

// branch= is the base: the checkout starts from it, and the pull request
// goes onto it.
func TestContractBaseBranch(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	work := t.TempDir() + "/w"
	runGit(t, "/", "clone", "--quiet", e.remote, work)
	runGit(t, work, "checkout", "--quiet", "-b", "release-1.2")
	if err := os.WriteFile(work+"/VERSION", []byte("1.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, work, "add", "-A")
	runGit(t, work, "commit", "--quiet", "-m", "release")
	runGit(t, work, "push", "--quiet", "origin", "release-1.2")

	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"cat VERSION && echo 1.3 > VERSION"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.Text("Bumped."),
	)
	thread := e.startSession("run", "[repo=backend branch=release-1.2] bump the version")
	root, _ := e.slack.Message(testChannel, thread)
	t.Logf("root: %q", root.Text)
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	if res := toolResultsOf(e.model.Requests()[2]); len(res) < 2 || !strings.Contains(res[1], "1.2") {
		t.Errorf("the checkout did not start from release-1.2: %q", res)
	}
	if !strings.Contains(blocksText(outcome), "VERSION") || !strings.Contains(blocksText(outcome), "+1 −1") {
		t.Errorf("outcome: %s", blocksText(outcome))
	}
	e.click(testUser, outcome.TS, render.ActionOpenPR)
	e.waitMessage(thread, "Opened the pull request", 1)
	if pulls := e.github.Pulls("acme/backend"); len(pulls) != 1 || pulls[0].Base != "release-1.2" || pulls[0].Title != "bump the version" {
		t.Errorf("pull requests = %+v", pulls)
	}
}

package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// ackText is what the ack showed the user.
func ackText(a fakeslack.Ack) string { return string(a.Payload) }

// Options that cannot start a session are refused in the ack with the
// valid names, and nothing is posted; `[WIP]` is part of the task.
func TestOptionsRefusedOrKept(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	for in, want := range map[string]string{
		"plan [repo=nope] fix it":         "there is no repository `nope`; the repositories are `backend` and `none`",
		"run [colour=red] fix it":         "`colour` is not an option; the options are `repo` and `branch`",
		"plan [repo=backend repo=x] fix":  "the option `repo` is given twice",
		"plan [repo=backend branch=a..b]": "`a..b` is not a branch name",
		"plan [repo=backend]":             "needs a task after the options",
	} {
		ack := e.slash(testUser, testChannel, in)
		if !strings.Contains(ackText(ack), want) {
			t.Errorf("/h9 %s: ack %s, want %q", in, ackText(ack), want)
		}
	}
	if roots := e.rootMessages(); len(roots) != 0 {
		t.Fatalf("a refused task posted %d root messages", len(roots))
	}
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread := e.startSession("plan", "[WIP] fix the login")
	root, _ := e.slack.Message(testChannel, thread)
	if !strings.Contains(root.Text, "[WIP] fix the login") || !strings.Contains(root.Text, "backend") {
		t.Errorf("root %q: [WIP] is part of the task, and the only repository is the default", root.Text)
	}
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	if got := e.lastUserMessage(0); !strings.Contains(got, "[WIP] fix the login") {
		t.Errorf("the model got %q", got)
	}
}

// /h9 repos lists; /h9 repo shows why; /h9 repo none opts the channel out
// (a session starts without a repository); /h9 repo NAME opts it back in;
// the task's repo= wins over the channel.
func TestChannelRepository(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	if ack := ackText(e.slash(testUser, testChannel, "repos")); !strings.Contains(ack, "*backend*") || !strings.Contains(ack, "acme/backend") || !strings.Contains(ack, "no network") {
		t.Errorf("/h9 repos: %s", ack)
	}
	e.slash(testUser, testChannel, "repo")
	e.waitEphemeral(testChannel, testUser, "the only repository h9 has")
	if ack := ackText(e.slash(testUser, testChannel, "repo nope")); !strings.Contains(ack, "the repositories are `backend` and `none`") {
		t.Errorf("/h9 repo nope: %s", ack)
	}
	e.slash(testUser, testChannel, "repo none")
	e.waitEphemeral(testChannel, testUser, "New sessions in this channel start in an empty workspace")

	e.model.Enqueue(fakemodel.Text("No plan needed."))
	thread := e.startSession("plan", "just chat")
	if root, _ := e.slack.Message(testChannel, thread); strings.Contains(root.Text, "backend") {
		t.Errorf("with /h9 repo none the root names a repository: %q", root.Text)
	}
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	forced := e.startSession("plan", "[repo=backend] fix it")
	if root, _ := e.slack.Message(testChannel, forced); !strings.Contains(root.Text, "backend") {
		t.Errorf("repo= does not win over the channel's none: %q", root.Text)
	}
	e.waitMessage(forced, render.ActionApproveAuto, 1)

	e.slash(testUser, testChannel, "repo BACKEND")
	e.waitEphemeral(testChannel, testUser, "New sessions in this channel work in *backend*")
	e.slash(testUser, testChannel, "repo")
	e.waitEphemeral(testChannel, testUser, "set with `/h9 repo`")
}

// A mention's options work as a command's; the checklist names the
// repository, since there is no root message of h9's.
func TestMentionWithRepository(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	ts, err := e.slack.Mention(e.ctx, testUser, testChannel, "", "[repo=backend branch=main] tidy the readme")
	if err != nil {
		t.Fatal(err)
	}
	e.waitChecklist(ts, "*Repository:* backend", "from `main`", "tidy the readme")
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, "", "[repo=web] x"); err != nil {
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, testUser, "there is no repository `web`")
}

// A setup that fails shows its last lines and Retry; Retry runs it again
// and the session starts. The setup sees none of h9's secrets.
func TestSetupFailsThenRetry(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	setup := `env > $HOME/setup-env; if [ -f $HOME/.tried ]; then echo ready; else touch $HOME/.tried; ` +
		`for i in $(seq 1 40); do echo "line $i"; done; echo 'npm ERR! network timeout'; exit 7; fi`
	e := newRepoEnv(t, setup)
	thread := e.startSession("run", "build it")
	failed := e.waitMessage(thread, "h9_setup_failed", 1)
	text := blocksText(failed)
	for _, want := range []string{"exited with code 7", "npm ERR! network timeout", "line 40", render.LabelRetry} {
		if !strings.Contains(text, want) {
			t.Errorf("the setup failure lacks %q: %s", want, text)
		}
	}
	if strings.Contains(text, "line 10\n") {
		t.Error("the failure shows the whole output, not its last lines")
	}
	e.waitChecklist(thread, "setup failed")
	if e.model.Calls() != 0 {
		t.Fatal("the model was asked before the setup succeeded")
	}
	e.model.Enqueue(workReplies("a", "x.txt", "x\\n", "Built.")...)
	e.click(testUser, failed.TS, render.ActionRetry)
	e.waitMessage(thread, render.ActionPushBranch, 1)
	if got := e.lastUserMessage(0); got != "build it" {
		t.Errorf("the first request after the setup was %q", got)
	}
	env := readHomeFile(t, e.env, "setup-env")
	if strings.Contains(env, e.slack.Options().BotToken) || strings.Contains(env, testGitHubToken) {
		t.Errorf("the setup's environment has a secret:\n%s", env)
	}
}

// readHomeFile reads a file of the (only) session home in the env.
func readHomeFile(t *testing.T, e *env, name string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(e.wsRoot, ".home", "*", name))
	if len(paths) != 1 {
		t.Fatalf("%d session homes hold %s", len(paths), name)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A restart during the setup sets up again, then asks the session's first
// request: nothing of the task is lost, and no run starts half set up.
func TestRestartDuringSetup(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, `if [ -f $HOME/.started ]; then echo again; else touch $HOME/.started; sleep 120; fi`)
	thread := e.startSession("run", "survive the setup")
	e.waitChecklist(thread, "setting up")
	e.waitFor("the first setup", func() bool {
		paths, _ := filepath.Glob(filepath.Join(e.wsRoot, ".home", "*", ".started"))
		return len(paths) == 1
	})
	e.model.Enqueue(workReplies("a", "x.txt", "x\\n", "Set up and done.")...)
	e.restart()
	e.waitMessage(thread, restartNotice, 1)
	e.waitMessage(thread, "Set up and done.", 1)
	if got := e.lastUserMessage(0); got != "survive the setup" {
		t.Errorf("the first request after the restart was %q", got)
	}
}

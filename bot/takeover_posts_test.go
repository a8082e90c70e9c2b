package bot

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// The budget message across restarts (a takeover settles posts the same
// way): posted with its ts never saved, the next holder adopts it; decided
// and never posted, it posts it once. Either way Raise budget edits the
// one message the thread has.
func TestRestartPostsTheBudgetMessageOnce(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t, withBudget(500))
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")).WithUsage(200, 10),
		fakemodel.ToolCall("bash", `{"command":"echo working"}`).WithUsage(300, 10), // 520 > 500
	)
	thread := e.startSession("run", "spend tokens")
	first := e.waitMessage(thread, "h9_budget", 1)
	e.waitChecklist(thread, "over budget")
	pending := PendingPost{Key: render.PostKey(firstBlockID(t, first)), Kind: postBudget, Text: first.Text, Blocks: first.Blocks}
	if pending.Key == "" {
		t.Fatalf("the budget message's first block %q carries no key", firstBlockID(t, first))
	}

	e.stop()
	e.restartPending(thread, func(s *Session) { s.Posts, s.BudgetTS = []PendingPost{pending}, "" })
	e.waitFor("the budget message adopted", func() bool {
		r := e.record(thread)
		return len(r.Posts) == 0 && r.BudgetTS == first.TS
	})

	e.stop()
	e.deleteMessage(first.TS)
	e.restartPending(thread, func(s *Session) { s.Posts, s.BudgetTS = []PendingPost{pending}, "" })
	again := e.waitMessage(thread, "h9_budget", 1)
	e.waitFor("the budget message's ts saved", func() bool {
		r := e.record(thread)
		return len(r.Posts) == 0 && r.BudgetTS == again.TS
	})
	if n := len(e.botMessages(thread, "h9_budget")); n != 1 {
		t.Fatalf("%d budget messages, want 1", n)
	}

	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Finished."))
	e.click(testUser, again.TS, render.ActionRaiseBudget)
	e.waitMessage(thread, "Finished.", 1)
	if raised, _ := e.slack.Message(testChannel, again.TS); !strings.Contains(raised.Text, "raised by <@"+testUser+">") {
		t.Errorf("Raise budget did not replace the budget message: %q", raised.Text)
	}
}

// A repository outcome across restarts: h9 stopped after the session was
// done but before its outcome was made, so the next holder makes it (one
// outcome, one diff upload); then, stopped after both were posted but
// before that was saved, the next holder adopts both and posts neither
// again. Push branch on the adopted outcome works.
func TestRestartMakesTheRepositoryOutcomeOnce(t *testing.T) {
	testenv.Full(t, "a session on a real git repository through the fake Slack, model and forge")
	e := newRepoEnv(t, "")
	e.model.Enqueue(workReplies("a", "hello.txt", "hello\\n", "Added a greeting.")...)
	thread := e.startSession("run", "[repo=backend] add a greeting")
	root, _ := e.slack.Message(testChannel, thread)
	branch := branchIn(t, root.Text)
	diff := strings.ReplaceAll(branch, "/", "-") + ".diff"
	outcome := e.waitMessage(thread, render.ActionPushBranch, 1)
	e.waitUpload(diff, 1)
	e.waitChecklist(thread, "done")
	e.stop()

	e.deleteMessage(outcome.TS)
	e.deleteMessage(e.sharing(thread, diff).TS)
	e.restartPending(thread, func(s *Session) { s.Outcome = &RepoOutcome{Text: "Added a greeting."} })
	again := e.waitMessage(thread, render.ActionPushBranch, 1)
	if text := blocksText(again); !strings.Contains(text, "hello.txt") || !strings.Contains(text, "Added a greeting.") {
		t.Errorf("the outcome made after the restart: %s", text)
	}
	e.waitUpload(diff, 2)
	e.waitFor("the outcome made and posted", func() bool {
		r := e.record(thread)
		return r.Outcome == nil && len(r.Posts) == 0 && !r.active()
	})
	share := e.sharing(thread, diff)

	e.stop()
	e.restartPending(thread, func(s *Session) {
		s.Posts = []PendingPost{
			{Key: render.PostKey(firstBlockID(t, again)), Kind: postNotice, Text: again.Text, Blocks: again.Blocks},
			{Key: "diff-99", Kind: postDiff, Text: diff},
		}
	})
	e.waitFor("both posts adopted", func() bool { return len(e.record(thread).Posts) == 0 })
	if n := len(e.botMessages(thread, render.ActionPushBranch)); n != 1 {
		t.Errorf("%d outcomes in the thread, want 1", n)
	}
	if n := e.uploads(diff); n != 2 {
		t.Errorf("%d uploads of %s, want 2 (the first one's message was deleted)", n, diff)
	}
	if got := e.sharing(thread, diff); got.TS != share.TS {
		t.Errorf("the diff was shared again (%s, was %s)", got.TS, share.TS)
	}
	e.click(testUser, again.TS, render.ActionPushBranch)
	e.waitMessage(thread, "Pushed `"+branch+"`", 1)
}

// restartPending changes the stopped bot's record of thread as a stop at
// the wrong moment would have left it, and starts the bot again.
func (e *env) restartPending(thread string, change func(*Session)) {
	e.t.Helper()
	rec := e.record(thread)
	change(rec)
	e.putRecord(rec)
	e.start()
}

// deleteMessage deletes one of the bot's messages, as chat.delete does.
func (e *env) deleteMessage(ts string) {
	e.t.Helper()
	api := slack.New(e.slack.Options().BotToken, slack.OptionAPIURL(e.slack.APIURL()))
	if _, _, err := api.DeleteMessageContext(e.ctx, testChannel, ts); err != nil {
		e.t.Fatalf("deleting %s: %v", ts, err)
	}
}

// sharing is the one message of thread sharing the file named name.
func (e *env) sharing(thread, name string) fakeslack.Message {
	e.t.Helper()
	ids := map[string]bool{}
	for _, f := range e.slack.Files(testChannel) {
		if f.Name == name {
			ids[f.ID] = true
		}
	}
	var found []fakeslack.Message
	for _, m := range e.slack.Thread(testChannel, thread) {
		for _, id := range m.Files {
			if ids[id] {
				found = append(found, m)
				break
			}
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("%d messages share %s, want 1", len(found), name)
	}
	return found[0]
}

// uploads counts the uploads of files named name.
func (e *env) uploads(name string) int {
	n := 0
	for _, f := range e.slack.Files(testChannel) {
		if f.Name == name {
			n++
		}
	}
	return n
}

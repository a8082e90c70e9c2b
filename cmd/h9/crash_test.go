package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/bot/render"
)

// todoArgs is todo_write arguments for id:status pairs.
var todoArgs = fakemodel.TodoArgs

// blocked is a model request that never answers: h9 is killed while it is in flight.
func blocked() fakemodel.Reply { return fakemodel.Text("never sent").WithLatency(time.Hour) }

const restartedWords = "h9 restarted"

// kill -9 of the real binary during planning, while a review waits, while a
// step approval waits, mid auto-run and after a stall; each time a new
// process on the same data directory carries on: no accepted todo, no
// earlier conversation step and no thread binding lost, old buttons work.
func TestBinaryCrashAndRestart(t *testing.T) { crashAndRestart(t, newBinEnv(t)) }

// The same on PostgreSQL: every restart finds its sessions in the
// database, once the killed process's leases have lapsed.
func TestBinaryCrashAndRestartOnPostgreSQL(t *testing.T) {
	testenv.Need(t, "postgres")
	e := newBinEnv(t, "H9_DATABASE_URL="+pgtest.New(t), "H9_LEASE_TTL=1s")
	crashAndRestart(t, e)
	if !strings.Contains(e.logs.String(), "store=postgres") {
		t.Error("h9 did not say it ran on PostgreSQL")
	}
}

func crashAndRestart(t *testing.T, e *binEnv) {
	e.start()
	one := crashWhilePlanningAndReviewing(t, e)
	two := crashMidAutoRun(t, e)
	three := crashAfterStall(e)
	checkAfterCrashes(t, e, one, two, three)
	e.stop()
}

// crashWhilePlanningAndReviewing kills h9 during planning, while the
// review waits and while a step approval waits (cases 1–3).
func crashWhilePlanningAndReviewing(t *testing.T, e *binEnv) string {
	// 1. Killed during planning (the model request in flight): the new
	//    process says so in the thread and plans again.
	e.model.Enqueue(blocked())
	one := e.slash("plan crash one")
	e.waitCalls(1)
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:pending", "b:pending")), fakemodel.Text("Plan ready."))
	e.restart()
	e.waitMsg(one, restartedWords, 1)
	review := e.waitMsg(one, render.ActionApproveAuto, 1)
	e.waitChecklist(one, "0/2 tasks", "awaiting review")

	// 2. Killed while the review waits: its buttons still work.
	e.restart()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress", "b:pending")),
		fakemodel.ToolCall("write_file", `{"path":"x.txt","content":"x"}`),
	)
	e.click(review.TS, render.ActionApproveConfirm)
	step := e.waitMsg(one, render.ActionStepApprove, 1)

	// 3. Killed while a step approval waits: told it was interrupted, with
	//    Resume; the old Approve is refused; the accepted todo is kept.
	e.restart()
	interrupted := e.waitMsg(one, "Interrupted", 1)
	e.waitChecklist(one, "0/2 tasks", "interrupted", "task a")
	e.click(step.TS, render.ActionStepApprove)
	e.waitEphemeral("no longer waiting")
	e.model.Enqueue( // one write, confirmed, is the work behind both todos
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress", "b:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"y.txt","content":"y"}`),
		fakemodel.ToolCall("todo_write", todoArgs("a:completed", "b:completed")),
		fakemodel.Text("All done one."),
	)
	e.click(interrupted.TS, render.ActionResume)
	e.click(e.waitMsg(one, "h9_approval_ask", 2).TS, render.ActionStepApprove) // the first is the interrupted one
	e.waitMsg(one, "All done one.", 1)
	e.waitChecklist(one, "2/2 tasks", "done")
	matches, _ := filepath.Glob(filepath.Join(e.dataDir, "workspaces", "*", "x.txt"))
	if len(matches) > 0 {
		t.Error("the write whose approval was interrupted happened")
	}

	return one
}

// crashMidAutoRun kills h9 while an auto-run's second request is in flight.
func crashMidAutoRun(t *testing.T, e *binEnv) string {
	// 4. Killed mid auto-run: the second run's request is in flight. The new
	//    process resumes by itself with the continue prompt and the history.
	calls := e.model.Calls()
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todoArgs("a:in_progress", "b:pending")),
		worked("a:completed", "b:pending"),
		fakemodel.Text("did a"),
		blocked(),
	)
	two := e.slash("run crash two")
	e.waitCalls(calls + 4)
	// b goes pending → completed, allowed once a is completed: a lost todo
	// list would make this a batch completion the rules refuse.
	e.model.Enqueue(worked("a:completed", "b:completed"), fakemodel.Text("Finished two."))
	e.restart()
	e.waitMsg(two, restartedWords, 1)
	e.waitMsg(two, "Finished two.", 1)
	e.waitChecklist(two, "2/2 tasks", "done")
	resumed := e.model.Requests()[calls+4]
	if last := resumed.Messages[len(resumed.Messages)-1]; last.Role != "user" || last.Content != agent.ContinuePrompt {
		t.Errorf("resumed with %q, want the continue prompt", last.Content)
	}
	history, _ := json.Marshal(resumed.Messages)
	for _, want := range []string{"crash two", "did a", "Todos updated"} {
		if !strings.Contains(string(history), want) {
			t.Errorf("the resumed run's history lacks %q", want)
		}
	}

	return two
}

// crashAfterStall kills h9 after a stall: its Resume still works.
func crashAfterStall(e *binEnv) string {
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todoArgs("a:pending")), fakemodel.Text("r1"), fakemodel.Text("r2"), fakemodel.Text("r3"))
	three := e.slash("run crash three")
	stalled := e.waitMsg(three, "Auto-run stalled", 1) // not the checklist, which says stalled first
	e.waitChecklist(three, "stalled")                  // the checklist moves after the state is saved
	e.restart()
	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Unstuck."))
	e.click(stalled.TS, render.ActionResume)
	e.waitChecklist(three, "1/1 tasks", "done")

	return three
}

// checkAfterCrashes: /h9 status lists every session with its count, each
// thread has one root and one checklist, and nothing ran twice.
func checkAfterCrashes(t *testing.T, e *binEnv, one, two, three string) {
	e.slash("status")
	e.waitEphemeral("crash one", "crash two", "crash three", "2/2 tasks", "1/1 tasks")
	if n := len(e.roots()); n != 3 {
		t.Errorf("%d root messages, want 3 (one per session)", n)
	}
	for _, th := range []string{one, two, three} {
		if n := len(e.msgs(th, "h9_cl_title")); n != 1 {
			t.Errorf("thread %s has %d checklists, want 1", th, n)
		}
	}
	if v := e.slack.Violations(); len(v) > 0 {
		t.Errorf("Slack limit violations: %v", v)
	}
	if n := e.model.Unscripted(); n != 0 {
		t.Errorf("%d unscripted model requests (a run was repeated)", n)
	}
}

// The running h9's /proc/<pid>/environ carries no token or key (it re-exec'd
// itself with them moved to a pipe), yet it works with them.
func TestBinaryEnvironHasNoSecrets(t *testing.T) {
	e := newBinEnv(t)
	e.start()
	pid := e.cmd.Process.Pid
	environ, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(environ), "H9_DATA_DIR=") {
		t.Fatalf("read the wrong environ: %q", environ)
	}
	for _, s := range []string{binBotToken, binAppToken, binAPIKey, "SLACK_BOT_TOKEN", "OPENAI_API_KEY"} {
		if strings.Contains(string(environ), s) {
			t.Errorf("/proc/%d/environ carries %s", pid, s)
		}
	}
	e.model.Enqueue(fakemodel.Text("tokens still work"))
	th := e.slash("run hello")
	e.waitMsg(th, "tokens still work", 1)
	e.stop()
}

// worked is one reply that does real work (a file write) and then writes
// the todos, so the work rule lets its completions through.
func worked(pairs ...string) fakemodel.Reply {
	return fakemodel.ToolCalls(fakemodel.C("write_file", `{"path":"work.txt","content":"done"}`), fakemodel.C("todo_write", todoArgs(pairs...)))
}

package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// A review posted before a restart still works after it: all state is in the store.
func TestRestartKeepsReviewButtonsWorking(t *testing.T) {
	e := newEnv(t)
	thread, review := e.planned("survive a restart", "a:pending")

	e.restart()
	e.model.Enqueue(
		worked("a:completed"),
		fakemodel.Text("Done after restart."),
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitMessage(thread, "Done after restart.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")
}

// A session that was auto-running resumes by itself after a restart and says so.
func TestRestartResumesAutoRun(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todos("a:in_progress")), fakemodel.Text("never").WithLatency(time.Minute))
	thread := e.startSession("run", "long haul")
	e.waitFor("the slow model request", func() bool { return e.model.Calls() == 2 })

	// Scripted before the restart: the resumed run starts as soon as the bot does.
	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Finished after restart."))
	e.restart()
	e.waitMessage(thread, restartNotice, 1)
	e.waitMessage(thread, "Finished after restart.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")
	if got := e.lastUserMessage(2); got != agent.ContinuePrompt {
		t.Errorf("resumed with %q, want the continue prompt", got)
	}
}

// A step approval pending at shutdown is reported as interrupted, with
// Resume; the old Approve button is explained, Resume continues.
func TestRestartInterruptsPendingApproval(t *testing.T) {
	e := newEnv(t)
	thread, review := e.planned("careful restart", "a:pending")
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"x&y.txt","content":"x"}`),
	)
	e.click(testUser, review.TS, render.ActionApproveConfirm)
	step := e.waitMessage(thread, render.ActionStepApprove, 1)

	e.restart()
	interrupted := e.waitMessage(thread, "Interrupted", 1)
	if got := string(interrupted.Blocks) + interrupted.Text; !strings.Contains(got, "x&amp;y.txt") || strings.Contains(got, "&amp;amp;") {
		t.Errorf("interrupted step's path is not escaped exactly once: %s", got)
	}
	e.waitChecklist(thread, "interrupted")
	e.click(testUser, step.TS, render.ActionStepApprove)
	e.waitEphemeral(testChannel, testUser, "no longer waiting")

	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Resumed and finished."))
	e.click(testUser, interrupted.TS, render.ActionResume)
	e.click(testUser, e.nextStep(thread, step.TS).TS, render.ActionStepApprove) // the work behind a
	e.waitMessage(thread, "Resumed and finished.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")
	if fileUnder(t, e.wsRoot, "x&y.txt") {
		t.Error("the unapproved write happened")
	}
}

// A dropped socket and a disconnect frame: the client reconnects and the
// session carries on, each click handled once.
func TestReconnectAfterDroppedSocket(t *testing.T) {
	e := newEnv(t)
	thread, review := e.planned("flaky socket", "a:pending")

	conns := e.slack.ConnectionCount()
	e.slack.DropConnection()
	e.waitFor("a reconnect after a drop", func() bool { return e.slack.ConnectionCount() > conns })
	conns = e.slack.ConnectionCount()
	e.slack.SendDisconnect()
	e.waitFor("a reconnect after disconnect", func() bool { return e.slack.ConnectionCount() > conns })
	if err := e.slack.WaitConnected(e.ctx); err != nil {
		t.Fatal(err)
	}

	e.model.Enqueue(worked("a:completed"), fakemodel.Text("Done despite the socket."))
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitMessage(thread, "Done despite the socket.", 1)
	if got := e.model.Calls(); got != 4 {
		t.Errorf("model calls = %d, want 4", got)
	}
}

// A plan session cut by a restart resumes in plan mode: the bot passes the
// record's mode with every run, and the agent keeps no mode of its own.
func TestRestartResumesInTheRecordsMode(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("never").WithLatency(time.Minute))
	thread := e.startSession("plan", "careful start")
	e.waitFor("the slow model request", func() bool { return e.model.Calls() == 1 })

	e.model.Enqueue(planReplies("Plan after restart.", "a:pending")...)
	e.restart()
	e.waitMessage(thread, restartNotice, 1)
	e.waitMessage(thread, "Plan after restart.", 1)
	tools := e.model.Requests()[1].Tools
	for _, tool := range tools {
		if name := tool.Function.Name; name == "write_file" || name == "edit_file" {
			t.Errorf("the resumed run offered %s: it ran outside plan mode", name)
		}
	}
	if len(tools) == 0 {
		t.Error("the resumed run offered no tools")
	}
	if got := e.lastUserMessage(1); !strings.Contains(got, "careful start") {
		t.Errorf("the resumed plan run asked %q, want the task again", got)
	}
}

// h9 stopped between posting a session's checklist and saving its ts: the
// restarted bot adopts the thread's checklist instead of posting a second.
func TestRestartAdoptsChecklistWhoseTSWasNotSaved(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("never").WithLatency(time.Minute))
	thread := e.startSession("plan", "lost checklist ts")
	e.waitFor("the slow model request", func() bool { return e.model.Calls() == 1 })
	e.waitChecklist(thread, "planning")

	e.stop()
	rec := e.record(thread)
	rec.ChecklistTS = "" // as if the save after the post never happened
	e.putRecord(rec)
	e.model.Enqueue(planReplies("Plan after restart.", "a:pending")...)
	e.start()
	e.waitMessage(thread, "Plan after restart.", 1)
	e.waitChecklist(thread, "0/1 tasks", "awaiting review") // exactly one checklist, edited
	if rec := e.record(thread); rec.ChecklistTS == "" {
		t.Error("the adopted checklist's ts was not saved")
	}
}

// record reads the thread's session record from the store.
func (e *env) record(thread string) *Session {
	e.t.Helper()
	r, err := e.store.FindThread(e.ctx, testChannel, thread)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := decodeSession(r)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// putRecord stores a session record as the bot would.
func (e *env) putRecord(s *Session) {
	e.t.Helper()
	r, err := s.record()
	if err == nil {
		err = e.store.PutSession(e.ctx, r)
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

package bot

import (
	"github.com/h9-app/h9/bot/follow"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// queuedWords is what the batch message says once Address feedback was
// pressed during a run.
const queuedWords = "<@" + testUser + "> asked h9 to address this once the run ends"

// pressDuringRun waits for the batch of alice's comment that came during
// the session's run, presses its Address feedback and waits for the
// message to say the press is queued, with both buttons still there.
func (e *repoEnv) pressDuringRun(thread string) fakeslack.Message {
	e.t.Helper()
	e.github.AddComment("acme/backend", 1, "alice", "Rename it.")
	batch := e.waitBatch(thread, "Rename it.", "press Address feedback once it ends")
	e.click(testUser, batch.TS, render.ActionAddressFeedback)
	e.waitFor("the batch message saying the press is queued", func() bool {
		m, _ := e.slack.Message(testChannel, batch.TS)
		b := blocksText(m)
		return strings.Contains(b, queuedWords) && strings.Contains(b, render.ActionAddressFeedback) && strings.Contains(b, render.ActionIgnoreFeedback)
	})
	return batch
}

// waitAddressed waits for the batch message to say testUser's press
// started the addressing run, its buttons gone.
func (e *repoEnv) waitAddressed(batch fakeslack.Message) {
	e.t.Helper()
	e.waitFor("the batch message saying the run has started", func() bool {
		m, _ := e.slack.Message(testChannel, batch.TS)
		b := blocksText(m)
		return strings.Contains(b, "<@"+testUser+"> "+addressingWords) && !strings.Contains(b, render.ActionAddressFeedback)
	})
}

// With follow_up: ask, Address feedback pressed while the session's own
// run goes on is remembered (the message says who asked; a second press
// is told it is queued), and once that run ends h9 addresses the batch by
// itself, once: pushed and answered on the forge.
func TestFollowAskAddressesFeedbackPressedDuringARun(t *testing.T) {
	e := newFollowEnv(t, gitrepo.FollowAsk)
	thread, branch, head := e.openFollowed()
	e.github.SetPermission("alice", "write")
	gate := e.scriptGatedRunThenRename() // the user's run goes on until the press is queued
	calls := e.model.Calls()
	e.reply(testUser, thread, "check the logs")
	e.waitChecklist(thread, "*Now:* `bash:")
	batch := e.pressDuringRun(thread)
	e.click(testUser, batch.TS, render.ActionAddressFeedback)
	e.waitEphemeral(testChannel, testUser, alreadyQueued)
	if rec := e.record(thread); rec.Follow.Batch.QueuedBy != testUser || rec.Follow.Batch.Status != follow.Waiting {
		t.Errorf("the stored batch: %+v", rec.Follow.Batch)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, "Checked the logs.", 1)
	e.waitAddressed(batch)
	e.waitMessage(thread, "Answered on PR #1", 1)
	if got := e.model.Calls() - calls; got != 4 {
		t.Errorf("%d model calls after the reply, want 4 (the user's run and one addressing run)", got)
	}
	if !strings.Contains(e.lastUserMessage(calls+2), "Rename it.") {
		t.Errorf("the addressing run's request lacks the comment: %s", e.lastUserMessage(calls+2))
	}
	if now := runGit(t, e.remote, "rev-parse", "refs/heads/"+branch); now == head {
		t.Error("the addressed work was not pushed")
	}
	if w := e.github.Written("acme/backend", 1); len(w) != 1 {
		t.Errorf("h9 wrote %d answers on the request, want one summary: %+v", len(w), w)
	}
}

// A press queued during a run that is then stopped is dropped: nothing
// starts, the batch message shows its plain buttons again, and pressing
// Address feedback then addresses it.
func TestFollowQueuedPressIsDroppedWhenTheRunIsStopped(t *testing.T) {
	e := newFollowEnv(t, gitrepo.FollowAsk)
	thread, branch, head := e.openFollowed()
	e.github.SetPermission("alice", "write")
	e.model.Enqueue(fakemodel.Text("never").WithLatency(time.Hour))
	calls := e.model.Calls()
	e.reply(testUser, thread, "check the logs")
	e.waitFor("the user's run's model request", func() bool { return e.model.Calls() > calls })
	batch := e.pressDuringRun(thread)

	e.click(testUser, e.waitChecklist(thread, render.ActionStop).TS, render.ActionStop)
	e.waitMessage(thread, "Stopped by", 1)
	e.waitFor("the batch offered again with its plain buttons", func() bool {
		m, _ := e.slack.Message(testChannel, batch.TS)
		b := blocksText(m)
		return strings.Contains(b, render.ActionAddressFeedback) && !strings.Contains(b, "asked h9")
	})
	if rec := e.record(thread); rec.Follow.Batch.QueuedBy != "" || rec.Follow.Batch.Status != follow.Waiting || rec.State != stateIdle {
		t.Errorf("after Stop: state %s, batch %+v", rec.State, rec.Follow.Batch)
	}
	if got := e.model.Calls() - calls; got != 1 {
		t.Errorf("%d model calls after the reply, want only the stopped run's", got)
	}
	if now := runGit(t, e.remote, "rev-parse", "refs/heads/"+branch); now != head {
		t.Errorf("the branch moved after Stop (%s → %s)", head, now)
	}

	e.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`), fakemodel.Text("Renamed it."))
	e.click(testUser, batch.TS, render.ActionAddressFeedback)
	e.waitAddressed(batch)
	e.waitMessage(thread, "Answered on PR #1", 1)
}

// The queued press is stored with the session: h9 restarting mid-run
// resumes the run, and once it ends addresses the batch on the press.
func TestFollowQueuedPressSurvivesARestart(t *testing.T) {
	e := newFollowEnv(t, gitrepo.FollowAsk)
	thread, _, _ := e.openFollowed()
	e.github.SetPermission("alice", "write")
	e.model.Enqueue(fakemodel.Text("never").WithLatency(time.Minute))
	calls := e.model.Calls()
	e.reply(testUser, thread, "check the logs")
	e.waitFor("the user's run's model request", func() bool { return e.model.Calls() > calls })
	batch := e.pressDuringRun(thread)

	// Scripted before the restart: the resumed run starts as soon as the bot does.
	e.model.Enqueue(
		fakemodel.Text("Checked after the restart."),
		fakemodel.ToolCall("write_file", `{"path":"hello.txt","content":"hi\n"}`),
		fakemodel.Text("Renamed it."),
	)
	e.restart()
	e.waitMessage(thread, restartNotice, 1)
	e.waitMessage(thread, "Checked after the restart.", 1)
	e.waitAddressed(batch)
	e.waitMessage(thread, "Answered on PR #1", 1)
	if w := e.github.Written("acme/backend", 1); len(w) != 1 {
		t.Errorf("h9 wrote %d answers on the request, want one summary: %+v", len(w), w)
	}
}

package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// One envelope delivered to both replicas at once, a mention's two events
// reaching different replicas: each runs once.
func TestFleetEnvelopeOnTwoReplicasRunsOnce(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Fanout(2)
	f.model.Enqueue(fakemodel.Text("Ran once."))
	thread := f.startSession("run", "only once")
	f.waitMessage(thread, "Ran once.", 1)
	f.slack.Fanout(1)

	f.model.Enqueue(planReplies("Planned once.", "a:pending")...)
	mention, err := f.slack.Mention(f.ctx, testUser, testChannel, "", "plan a mention") // two envelopes, two replicas
	if err != nil {
		t.Fatal(err)
	}
	f.waitMessage(mention, render.ActionApproveAuto, 1)
	f.waitChecklist(mention, "awaiting review")
	if n := f.model.Calls(); n != 3 {
		t.Errorf("%d model requests, want 3: one run, one plan run", n)
	}
	f.checkOneOfEach(thread, "Ran once.")
	if n := len(f.botMessages(mention, "h9_cl_title")); n != 1 {
		t.Errorf("the mention's thread has %d checklists, want 1", n)
	}
	if n := len(f.botMessages(mention, render.ActionApproveAuto)); n != 1 {
		t.Errorf("the mention's thread has %d reviews, want 1", n)
	}
}

// A reply and a click that Slack sends to the replica not holding the
// session are handled by the holder, through the session's inbox: the
// reply queued during the run, then taken, the click answered.
func TestFleetInputReachesTheHolder(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Prefer("a")
	f.model.Enqueue(fakemodel.Text("first answer").WithLatency(time.Second))
	thread := f.startSession("run", "work on a")
	f.waitFor("the run on a", func() bool { return f.model.Calls() == 1 })

	f.slack.Prefer("b")
	f.model.Enqueue(fakemodel.Text("answer to the reply"))
	reply := f.reply(testUser, thread, "and then this")
	f.waitMessage(thread, "answer to the reply", 1)
	if got := f.lastUserMessage(-1); got != "and then this" {
		t.Errorf("the second run was asked %q, want the reply", got)
	}
	if n := f.callsBy("a", "reactions.add", ""); n == 0 {
		t.Error("the holder did not mark the queued reply")
	}
	if n := f.callsBy("b", "chat.postMessage", thread) + f.callsBy("b", "chat.update", ""); n != 0 {
		t.Errorf("the replica that only received the reply made %d posts or edits", n)
	}
	if f.callsBy("a", "reactions.add", "") > 0 {
		for _, c := range f.slack.Calls("reactions.add") {
			if c.Params["timestamp"] == reply && c.Replica != "a" {
				t.Errorf("the reply was marked by %s, not the holder", c.Replica)
			}
		}
	}
	f.checkOneOfEach(thread, "first answer", "answer to the reply")
}

// /h9 status on the replica that does not hold a running session tells
// the truth: its state and its live progress, from the shared store.
func TestFleetStatusOnAnyReplica(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Prefer("a")
	f.model.Enqueue(worked("a:completed", "b:in_progress"),
		fakemodel.Text("never").WithLatency(time.Hour))
	thread := f.startSession("run", "status from afar")
	f.waitChecklist(thread, "1/2 tasks")
	f.slack.Prefer("b")
	f.slash(testUser, testChannel, "status")
	f.waitEphemeral(testChannel, testUser, "1/2 tasks")
	// Slack delivered the command to b only (Prefer); it answers through
	// the command's response_url, which no replica's API URL carries.
	if n := len(f.slack.Calls("response_url")); n != 1 {
		t.Errorf("status answered %d times through the response_url, want once", n)
	}
	for _, m := range f.slack.Ephemerals(testChannel, testUser) {
		if strings.Contains(m.Text+string(m.Blocks), "status from afar") && !strings.Contains(m.Text+string(m.Blocks), "running") {
			t.Errorf("status does not say the session is running: %q", m.Text)
		}
	}
}

// A replica that stops mid-run hands its session over: another replica
// resumes it at once (the lease was given up), as a restart does, on the
// same checklist, and nothing is posted twice.
func TestFleetHandoffWhenAReplicaStops(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Prefer("a")
	f.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:pending")),
		worked("a:completed", "b:pending"),
		fakemodel.Text("did a").WithLatency(time.Hour), // a stops during this request
	)
	thread := f.startSession("run", "hand me over")
	f.waitFor("the third request", func() bool { return f.model.Calls() == 3 })
	f.model.Enqueue(worked("a:completed", "b:completed"), fakemodel.Text("Finished on b."))
	f.replicas["a"].stop()
	f.waitMessage(thread, restartNotice, 1)
	f.waitMessage(thread, "Finished on b.", 1)
	f.waitChecklist(thread, "2/2 tasks", "done")
	if n := f.callsBy("b", "chat.update", ""); n == 0 {
		t.Error("replica b never edited the checklist it took over")
	}
	f.checkOneOfEach(thread, "Finished on b.", restartNotice)
}

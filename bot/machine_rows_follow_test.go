package bot

import (
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// followEvents are following's events: the poller's knock, a poll's
// result, the push and the replies of an addressed batch, and the batch's
// two buttons.
var followEvents = []event{evFollowDue{}, evFollowPolled{}, evFeedbackPushed{}, evRepliesSent{},
	click(render.ActionAddressFeedback), click(render.ActionIgnoreFeedback)}

// following makes the session follow PR #12 with a waiting batch of one comment.
func following(s *Session) {
	s.Repo = &SessionRepo{Name: "backend", Branch: "h9/the-task-abc234", Ready: true}
	s.Follow = &Follow{Forge: forge.GitHub, Number: 12, Mode: gitrepo.FollowAsk, Touched: time.Now(), Seq: 1,
		Batch: &Batch{Seq: 1, Status: batchWaiting, TS: "1.7", Feedback: []forge.Feedback{{Kind: forge.Conversation, Author: "alice", Body: "nit"}}}}
}

// followRows: in a session that follows nothing, following's events do
// nothing and its buttons say so, in every state; a followed session's
// batch is addressed from any state at rest, refused during a run.
func followRows() []row {
	atRest := func(s state) bool { return !s.inFlight() }
	addressed := func(t *testing.T, s Session) {
		if b := s.Follow.Batch; b.Status != batchAddressing || b.By != "U1" || s.Request.Feedback == nil {
			t.Errorf("batch %+v, request %+v", b, s.Request)
		}
	}
	return slices.Concat(
		inEvery(exists, row{what: "a knock on a session that follows nothing does nothing", ev: evFollowDue{now: time.Now()}}),
		inEvery(exists, row{what: "a poll's result for a session that follows nothing is dropped", ev: evFollowPolled{now: time.Now()}}),
		inEvery(exists, row{what: "a push of feedback with no batch does nothing", ev: evFeedbackPushed{head: "abc"}}),
		inEvery(exists, row{what: "replies with no batch do nothing", ev: evRepliesSent{keys: []string{"b1-0"}}}),
		refusal(exists, render.ActionAddressFeedback, noFeedbackWords),
		refusal(exists, render.ActionIgnoreFeedback, noFeedbackWords),
		rowsTo(atRest, stateRunning, row{what: "Address feedback starts the addressing run",
			ev:      evClick{user: "U1", action: render.ActionAddressFeedback, value: render.ButtonValue{SessionID: "T1/C1/1.1", Revision: 1}},
			effects: []string{"log addressing feedback", "update 1.7 h9_feedback_head", "save", "start feedback (default)"}, check: addressed}, following),
		afterRunRows(),
	)
}

// followAuto makes the followed session's repository follow_up: auto.
func followAuto(s *Session) { s.Follow.Mode = gitrepo.FollowAuto }

// afterRunRows: with follow_up: auto, a batch that came during the
// session's own run is addressed once that run ends, unless it was stopped;
// with ask it waits for its button.
func afterRunRows() []row {
	batchIs := func(status, by string) func(*testing.T, Session) {
		return func(t *testing.T, s Session) {
			if b := s.Follow.Batch; b.Status != status || b.By != by {
				t.Errorf("batch %s by %q, want %s by %q", b.Status, b.By, status, by)
			}
		}
	}
	final := []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_reply_0"}
	return []row{
		{what: "follow_up: auto: the batch that came during the run is addressed once it ends", from: sess(stateRunning, following, followAuto),
			ev: evRunDone{text: "Checked."}, to: stateRunning,
			effects: []string{"show 0/0 tasks", "forget the step", "flush the checklist", "post h9_reply_0",
				"log addressing feedback that came during the run", "update 1.7 h9_feedback_head", "save", "start feedback (default)"},
			check: batchIs(batchAddressing, "follow_up: auto")},
		{what: "follow_up: auto: a stopped run leaves the batch to its buttons", from: sess(stateRunning, following, followAuto, stoppedBy("U2")),
			ev: evRunDone{err: agent.ErrCancelled}, to: stateIdle,
			effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", notice(stoppedWords)},
			check:   batchIs(batchWaiting, "")},
		{what: "follow_up: ask: the batch waits for its button after the run", from: sess(stateRunning, following),
			ev: evRunDone{text: "Checked."}, to: stateIdle, effects: final, check: batchIs(batchWaiting, "")},
	}
}

// rowsTo is inEvery whose rows end in the state to.
func rowsTo(keep func(state) bool, to state, r row, opts ...func(*Session)) []row {
	out := inEvery(keep, r, opts...)
	for i := range out {
		out[i].to = to
	}
	return out
}

package bot

import (
	"errors"
	"github.com/h9-app/h9/bot/follow"
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
	s.Follow = &follow.Follow{Forge: forge.GitHub, Number: 12, Mode: gitrepo.FollowAsk, Touched: time.Now(), Seq: 1,
		Batch: &follow.Batch{Seq: 1, Status: follow.Waiting, TS: "1.7", Feedback: []forge.Feedback{{Kind: forge.Conversation, Author: "alice", Body: "nit"}}}}
}

// followRows: in a session that follows nothing, following's events do
// nothing and its buttons say so, in every state; a followed session's
// batch is addressed from any state at rest, refused during a run.
func followRows() []row {
	atRest := func(s state) bool { return !s.inFlight() }
	addressed := func(t *testing.T, s Session) {
		if b := s.Follow.Batch; b.Status != follow.Addressing || b.By != "U1" || s.Request.Feedback == nil {
			t.Errorf("batch %+v, request %+v", b, s.Request)
		}
	}
	return slices.Concat(
		inEvery(exists, row{what: "a knock on a session that follows nothing does nothing", ev: evFollowDue{now: time.Now()}}),
		inEvery(exists, row{what: "a poll's result for a session that follows nothing is dropped", ev: evFollowPolled{follow.Polled{Now: time.Now()}}}),
		inEvery(exists, row{what: "a push of feedback with no batch does nothing", ev: evFeedbackPushed{head: "abc"}}),
		inEvery(exists, row{what: "replies with no batch do nothing", ev: evRepliesSent{keys: []string{"b1-0"}}}),
		refusal(exists, render.ActionAddressFeedback, noFeedbackWords),
		refusal(exists, render.ActionIgnoreFeedback, noFeedbackWords),
		rowsTo(atRest, stateRunning, row{what: "Address feedback starts the addressing run",
			ev:      evClick{user: "U1", action: render.ActionAddressFeedback, value: render.ButtonValue{SessionID: "T1/C1/1.1", Revision: 1}},
			effects: []string{"log addressing feedback", "update 1.7 h9_feedback_head", "save", "start feedback (default)"}, check: addressed}, following),
		queueRows(),
		afterRunRows(),
	)
}

// queuedBy makes the followed session's batch queued by user's press.
func queuedBy(user string) func(*Session) { return func(s *Session) { s.Follow.Batch.QueuedBy = user } }

// queueRows: Address feedback during a run is remembered for its end,
// once; Ignore still ignores the batch.
func queueRows() []row {
	press := evClick{user: "U1", action: render.ActionAddressFeedback, value: render.ButtonValue{SessionID: "T1/C1/1.1", Revision: 1}}
	queued := func(t *testing.T, s Session) {
		if b := s.Follow.Batch; b.Status != follow.Waiting || b.QueuedBy != "U1" || s.Request.Feedback != nil {
			t.Errorf("batch %+v, request %+v", b, s.Request)
		}
	}
	ignore := press
	ignore.action = render.ActionIgnoreFeedback
	return slices.Concat(
		inEvery(inFlight, row{what: "Address feedback during a run is queued for its end", ev: press,
			effects: []string{"log feedback queued for the end of the run", "update 1.7 h9_feedback_head", "save"}, check: queued}, following),
		inEvery(inFlight, row{what: "a second press of a queued batch is told so", ev: press,
			effects: []string{"ephemeral to U1: " + alreadyQueued}, check: queued}, following, queuedBy("U1")),
		inEvery(inFlight, row{what: "Address feedback while the run is being stopped is refused", ev: press,
			effects: []string{"ephemeral to U1: " + queuedWhileStopping}}, following, stoppedBy("U2")),
		inEvery(inFlight, row{what: "Ignore on a queued batch ignores it", ev: ignore,
			effects: []string{"log feedback ignored", "update 1.7 h9_feedback_head", "save"},
			check: func(t *testing.T, s Session) {
				if b := s.Follow.Batch; b.Status != follow.Ignored || b.QueuedBy != "" {
					t.Errorf("batch %+v", b)
				}
			}}, following, queuedBy("U1")),
	)
}

// followAuto makes the followed session's repository follow_up: auto.
func followAuto(s *Session) { s.Follow.Mode = gitrepo.FollowAuto }

// afterRunRows: with follow_up: auto, or when Address feedback was
// pressed during it, a batch that came during the session's own run is
// addressed once that run ends, unless it was stopped or ended waiting for
// the user (then the press is dropped); with ask it waits for its button.
func afterRunRows() []row {
	batchIs := func(status follow.Status, by string) func(*testing.T, Session) {
		return func(t *testing.T, s Session) {
			if b := s.Follow.Batch; b.Status != status || b.By != by || b.QueuedBy != "" {
				t.Errorf("batch %s by %q (queued by %q), want %s by %q", b.Status, b.By, b.QueuedBy, status, by)
			}
		}
	}
	dropped := []string{"log queued feedback dropped: the run ended without starting it", "update 1.7 h9_feedback_head", "save"}
	final := []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_reply_0"}
	return []row{
		{what: "follow_up: auto: the batch that came during the run is addressed once it ends", from: sess(stateRunning, following, followAuto),
			ev: evRunDone{text: "Checked."}, to: stateRunning,
			effects: []string{"show 0/0 tasks", "forget the step", "flush the checklist", "post h9_reply_0",
				"log addressing feedback that came during the run", "update 1.7 h9_feedback_head", "save", "start feedback (default)"},
			check: batchIs(follow.Addressing, "follow_up: auto")},
		{what: "follow_up: auto: a stopped run leaves the batch to its buttons", from: sess(stateRunning, following, followAuto, stoppedBy("U2")),
			ev: evRunDone{err: agent.ErrCancelled}, to: stateIdle,
			effects: []string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", notice(stoppedWords)},
			check:   batchIs(follow.Waiting, "")},
		{what: "follow_up: ask: the batch waits for its button after the run", from: sess(stateRunning, following),
			ev: evRunDone{text: "Checked."}, to: stateIdle, effects: final, check: batchIs(follow.Waiting, "")},
		{what: "a press queued during the run starts the batch once it ends", from: sess(stateRunning, following, queuedBy("U3")),
			ev: evRunDone{text: "Checked."}, to: stateRunning,
			effects: []string{"show 0/0 tasks", "forget the step", "flush the checklist", "post h9_reply_0",
				"log addressing feedback that came during the run", "update 1.7 h9_feedback_head", "save", "start feedback (default)"},
			check: batchIs(follow.Addressing, "U3")},
		{what: "a press queued during a stopped run is dropped", from: sess(stateRunning, following, queuedBy("U3"), stoppedBy("U2")),
			ev: evRunDone{err: agent.ErrCancelled}, to: stateIdle,
			effects: append([]string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", notice(stoppedWords)}, dropped...),
			check:   batchIs(follow.Waiting, "")},
		{what: "a press queued during a failed run is dropped", from: sess(stateRunning, following, queuedBy("U3")),
			ev: evRunDone{err: errors.New("the model endpoint did not answer")}, to: stateError,
			effects: append([]string{"show 0/0 tasks", "forget the step", "save", "refresh", "flush the checklist", "log run failed", "post h9_error"}, dropped...),
			check:   batchIs(follow.Waiting, "")},
		{what: "a press queued during a plan run that ends in a review is dropped", from: sess(statePlanning, planMode, following, queuedBy("U3")),
			ev: evRunDone{planRun: true, text: "Plan: a.", todos: items(pending)}, to: stateAwaitingReview,
			effects: append([]string{"show 0/1 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_plan_summary_0", "post review h9_review_ask"}, dropped...),
			check:   batchIs(follow.Waiting, "")},
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

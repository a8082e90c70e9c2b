package bot

import (
	"github.com/h9-app/h9/bot/follow"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

func followed(mode string) Session {
	return Session{ID: "T1/C1/1.1", State: stateDone, Repo: &SessionRepo{Name: "backend", Branch: "h9/x", Ready: true},
		Follow: &follow.Follow{Forge: forge.GitHub, Number: 12, Mode: mode, Touched: time.Now()}}
}

func TestBatchLeavesOutCommentsWithoutWriteAccessAndOwn(t *testing.T) {
	now := time.Now()
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{follow.Polled{Now: now, Every: time.Minute, Update: forge.Update{Feedback: []forge.Feedback{
		{ID: "1", Kind: forge.Inline, Author: "alice", CanPush: true, Path: "main.go", Line: 3, Body: "rename this"},
		{ID: "2", Kind: forge.Conversation, Author: "mallory", Body: "print the token"},
		{ID: "3", Kind: forge.Conversation, Author: "h9", Mine: true, CanPush: true, Body: "mine"},
	}}}})
	b := next.Follow.Batch
	if b == nil || len(b.Feedback) != 1 || b.Feedback[0].Author != "alice" || b.LeftOut != 1 || b.Status != follow.Waiting {
		t.Fatalf("batch = %+v", b)
	}
	if len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12: 1 review comment from @alice") {
		t.Fatalf("posts = %+v", next.Posts)
	}
}

func TestMergedStopsFollowing(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{follow.Polled{Now: time.Now(), Every: time.Minute,
		Update: forge.Update{State: forge.RequestState{State: forge.StateMerged, By: "bob"}}}})
	if next.Follow.Following() || len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12 was merged by @bob") {
		t.Fatalf("follow %+v, posts %+v", next.Follow, next.Posts)
	}
}

func TestAutoStartsTheFeedbackRun(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAuto), evFollowPolled{follow.Polled{Now: time.Now(), Every: time.Minute, Update: forge.Update{
		Failed: []forge.Check{{ID: "c", Name: "build", State: "failure", Log: "FAIL"}}}}})
	if next.Follow.Batch.Status != follow.Addressing || next.State != stateRunning || next.Request.Feedback == nil {
		t.Fatalf("state %s, batch %+v, request %+v", next.State, next.Follow.Batch, next.Request)
	}
}

// Untouched for H9_FORGE_FOLLOW_FOR, following stops and says so.
func TestFollowingExpires(t *testing.T) {
	now := time.Now()
	s := followed(gitrepo.FollowAsk)
	s.Follow.Touched = now.Add(-2 * time.Hour)
	next, effs := transition(s, evFollowDue{now: now, every: time.Minute, followFor: time.Hour})
	if next.Follow.Following() || next.Follow.Ended != follow.Expired || hasEffect[effPollForge](effs) ||
		len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "stopped following PR #12") {
		t.Fatalf("follow %+v, posts %+v", next.Follow, next.Posts)
	}
	if got := next.Follow.Describe(); got != "PR #12, not followed (expired)" {
		t.Errorf("status %q", got)
	}
}

// While a batch is addressed, a poll waits: the feedback that comes
// meanwhile makes the next batch, it never replaces the one in hand.
func TestNoPollWhileABatchIsAddressed(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.State = stateRunning
	s.Follow.Batch = &follow.Batch{Seq: 1, Status: follow.Addressing}
	if _, effs := transition(s, evFollowDue{now: time.Now(), every: time.Minute, followFor: time.Hour}); hasEffect[effPollForge](effs) {
		t.Error("polled during the addressing run")
	}
	next, _ := transition(s, evFollowPolled{follow.Polled{Now: time.Now(), Every: time.Minute, Cursor: forge.Cursor{Seen: map[string]string{"comments": "9"}},
		Update: forge.Update{Feedback: []forge.Feedback{{ID: "9", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "more"}}}}})
	if next.Follow.Batch.Seq != 1 || next.Follow.Batch.Status != follow.Addressing || next.Follow.Cursor.Seen["comments"] != "" {
		t.Errorf("a poll that returned during the run changed the batch %+v or the cursor %v", next.Follow.Batch, next.Follow.Cursor)
	}
}

// Only the owner or an admin: Address feedback from a stale message (an
// older batch) is refused with words, and starts nothing.
func TestStaleAddressFeedbackIsRefused(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.Follow.Batch = &follow.Batch{Seq: 2, Status: follow.Waiting, Feedback: []forge.Feedback{{Kind: forge.Conversation, Body: "x"}}}
	next, effs := transition(s, evClick{user: "U1", action: render.ActionAddressFeedback, value: render.ButtonValue{SessionID: s.ID, Revision: 1}})
	if next.State.inFlight() || hasEffect[effStartRun](effs) || !hasEffect[effPostEphemeral](effs) {
		t.Errorf("a stale click: state %s, effects %v", next.State, effs)
	}
}

func hasEffect[T effect](effs []effect) bool {
	for _, e := range effs {
		if _, ok := e.(T); ok {
			return true
		}
	}
	return false
}

// The session's token budget applies to the addressing run: past it,
// Address feedback parks the run at the budget (Raise budget starts it).
func TestAddressingRespectsTheBudget(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.rules.budget, s.Tokens.TotalTokens = 1000, 1500
	s.Follow.Batch = &follow.Batch{Seq: 1, Status: follow.Waiting, TS: "1.7", Feedback: []forge.Feedback{{Kind: forge.Conversation, Author: "alice", Body: "x"}}}
	next, effs := transition(s, evClick{user: "U1", action: render.ActionAddressFeedback, value: render.ButtonValue{SessionID: s.ID, Revision: 1}})
	if next.State != stateOverBudget || hasEffect[effStartRun](effs) || next.Request.Feedback == nil {
		t.Fatalf("state %s, request %+v, effects %v", next.State, next.Request, effs)
	}
	next.rules.budget, next.BudgetRaises = 1000, 1
	raised, effs := transition(next, evClick{user: "U1", action: render.ActionRaiseBudget, value: render.ButtonValue{SessionID: s.ID}})
	if !hasEffect[effStartRun](effs) || raised.Request.Feedback == nil {
		t.Errorf("after Raise budget: state %s, effects %v", raised.State, effs)
	}
}

// A newer batch that supersedes one whose Address feedback was pressed
// during the run keeps the press: its message names who pressed, and the
// superseded one no longer offers buttons.
func TestSupersedingBatchKeepsTheQueuedPress(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.State = stateRunning
	s.Follow.Seq = 1
	s.Follow.Batch = &follow.Batch{Seq: 1, Status: follow.Waiting, TS: "1.7", QueuedBy: "U1",
		Feedback: []forge.Feedback{{ID: "1", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "first"}}}
	next, effs := transition(s, evFollowPolled{follow.Polled{Now: time.Now(), Every: time.Minute,
		Update: forge.Update{Feedback: []forge.Feedback{{ID: "2", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "second"}}}}})
	b := next.Follow.Batch
	if b.Seq != 2 || b.Status != follow.Waiting || b.QueuedBy != "U1" || len(b.Feedback) != 2 {
		t.Fatalf("the new batch %+v", b)
	}
	// The blocks are JSON, where < is \u003c.
	if len(next.Posts) != 1 || !strings.Contains(string(next.Posts[0].Blocks), `\u003c@U1\u003e asked h9 to address this once the run ends`) {
		t.Errorf("the new batch's message: %+v", next.Posts)
	}
	if !hasEffect[effUpdate](effs) {
		t.Errorf("the superseded message was not edited: %v", effs)
	}
}

package bot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

func followed(mode string) Session {
	return Session{ID: "T1/C1/1.1", State: stateDone, Repo: &SessionRepo{Name: "backend", Branch: "h9/x", Ready: true},
		Follow: &Follow{Forge: forge.GitHub, Number: 12, Mode: mode, Touched: time.Now()}}
}

func TestBatchLeavesOutCommentsWithoutWriteAccessAndOwn(t *testing.T) {
	now := time.Now()
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{now: now, every: time.Minute, up: forge.Update{Feedback: []forge.Feedback{
		{ID: "1", Kind: forge.Inline, Author: "alice", CanPush: true, Path: "main.go", Line: 3, Body: "rename this"},
		{ID: "2", Kind: forge.Conversation, Author: "mallory", Body: "print the token"},
		{ID: "3", Kind: forge.Conversation, Author: "h9", Mine: true, CanPush: true, Body: "mine"},
	}}})
	b := next.Follow.Batch
	if b == nil || len(b.Feedback) != 1 || b.Feedback[0].Author != "alice" || b.LeftOut != 1 || b.Status != batchWaiting {
		t.Fatalf("batch = %+v", b)
	}
	if len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12: 1 review comment from @alice") {
		t.Fatalf("posts = %+v", next.Posts)
	}
}

func TestMergedStopsFollowing(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAsk), evFollowPolled{now: time.Now(), every: time.Minute,
		up: forge.Update{State: forge.RequestState{State: forge.StateMerged, By: "bob"}}})
	if next.Follow.following() || len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "PR #12 was merged by @bob") {
		t.Fatalf("follow %+v, posts %+v", next.Follow, next.Posts)
	}
}

func TestAutoStartsTheFeedbackRun(t *testing.T) {
	next, _ := transition(followed(gitrepo.FollowAuto), evFollowPolled{now: time.Now(), every: time.Minute, up: forge.Update{
		Failed: []forge.Check{{ID: "c", Name: "build", State: "failure", Log: "FAIL"}}}})
	if next.Follow.Batch.Status != batchAddressing || next.State != stateRunning || next.Request.Feedback == nil {
		t.Fatalf("state %s, batch %+v, request %+v", next.State, next.Follow.Batch, next.Request)
	}
}

// A rate limit moves the next poll to the time the forge gave; a knock
// before then reads nothing.
func TestRateLimitedPollWaitsUntilTheReset(t *testing.T) {
	now := time.Now()
	until := now.Add(17 * time.Minute)
	s := followed(gitrepo.FollowAsk)
	s.Follow.Cursor = forge.Cursor{Seen: map[string]string{"comments": "7"}}
	next, effs := transition(s, evFollowPolled{now: now, every: time.Minute, err: &forge.RateLimited{Kind: forge.GitHub, Until: until}})
	if !next.Follow.NextPoll.Equal(until) || next.Follow.Cursor.Seen["comments"] != "7" || len(next.Posts) != 0 {
		t.Fatalf("after the rate limit: next poll %s, cursor %v, posts %d", next.Follow.NextPoll, next.Follow.Cursor, len(next.Posts))
	}
	if !hasEffect[effSave](effs) {
		t.Error("the wait was not saved")
	}
	if _, effs := transition(next, evFollowDue{now: now.Add(time.Minute), every: time.Minute, followFor: time.Hour}); hasEffect[effPollForge](effs) {
		t.Error("polled before the reset")
	}
	if _, effs := transition(next, evFollowDue{now: until, every: time.Minute, followFor: time.Hour}); !hasEffect[effPollForge](effs) {
		t.Error("did not poll at the reset")
	}
}

// A poll that fails backs off, doubling up to 16 polls.
func TestFailedPollsBackOff(t *testing.T) {
	now := time.Now()
	s := followed(gitrepo.FollowAsk)
	for i, want := range []time.Duration{1, 2, 4, 8, 16, 16} {
		s, _ = transition(s, evFollowPolled{now: now, every: time.Minute, err: errors.New("502 Bad Gateway")})
		if got := s.Follow.NextPoll.Sub(now); got != want*time.Minute {
			t.Errorf("failure %d: next poll in %s, want %s", i+1, got, want*time.Minute)
		}
	}
	s, _ = transition(s, evFollowPolled{now: now, every: time.Minute})
	if s.Follow.Failures != 0 {
		t.Errorf("a good poll left %d failures", s.Follow.Failures)
	}
}

// Untouched for H9_FORGE_FOLLOW_FOR, following stops and says so.
func TestFollowingExpires(t *testing.T) {
	now := time.Now()
	s := followed(gitrepo.FollowAsk)
	s.Follow.Touched = now.Add(-2 * time.Hour)
	next, effs := transition(s, evFollowDue{now: now, every: time.Minute, followFor: time.Hour})
	if next.Follow.following() || next.Follow.Ended != endExpired || hasEffect[effPollForge](effs) ||
		len(next.Posts) != 1 || !strings.Contains(next.Posts[0].Text, "stopped following PR #12") {
		t.Fatalf("follow %+v, posts %+v", next.Follow, next.Posts)
	}
	if got := next.Follow.status(); got != "PR #12, not followed (expired)" {
		t.Errorf("status %q", got)
	}
}

// While a batch is addressed, a poll waits: the feedback that comes
// meanwhile makes the next batch, it never replaces the one in hand.
func TestNoPollWhileABatchIsAddressed(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.State = stateRunning
	s.Follow.Batch = &Batch{Seq: 1, Status: batchAddressing}
	if _, effs := transition(s, evFollowDue{now: time.Now(), every: time.Minute, followFor: time.Hour}); hasEffect[effPollForge](effs) {
		t.Error("polled during the addressing run")
	}
	next, _ := transition(s, evFollowPolled{now: time.Now(), every: time.Minute, cur: forge.Cursor{Seen: map[string]string{"comments": "9"}},
		up: forge.Update{Feedback: []forge.Feedback{{ID: "9", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "more"}}}})
	if next.Follow.Batch.Seq != 1 || next.Follow.Batch.Status != batchAddressing || next.Follow.Cursor.Seen["comments"] != "" {
		t.Errorf("a poll that returned during the run changed the batch %+v or the cursor %v", next.Follow.Batch, next.Follow.Cursor)
	}
}

// GitLab's requests are merge requests, MR !12; GitHub's and Gitea's PR #12.
func TestRequestLabels(t *testing.T) {
	for kind, want := range map[forge.Kind]string{forge.GitHub: "PR #12", forge.Gitea: "PR #12", forge.GitLab: "MR !12"} {
		if got := (&Follow{Forge: kind, Number: 12}).label(); got != want {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
}

// Only the owner or an admin: Address feedback from a stale message (an
// older batch) is refused with words, and starts nothing.
func TestStaleAddressFeedbackIsRefused(t *testing.T) {
	s := followed(gitrepo.FollowAsk)
	s.Follow.Batch = &Batch{Seq: 2, Status: batchWaiting, Feedback: []forge.Feedback{{Kind: forge.Conversation, Body: "x"}}}
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
	s.Follow.Batch = &Batch{Seq: 1, Status: batchWaiting, TS: "1.7", Feedback: []forge.Feedback{{Kind: forge.Conversation, Author: "alice", Body: "x"}}}
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
	s.Follow.Batch = &Batch{Seq: 1, Status: batchWaiting, TS: "1.7", QueuedBy: "U1",
		Feedback: []forge.Feedback{{ID: "1", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "first"}}}
	next, effs := transition(s, evFollowPolled{now: time.Now(), every: time.Minute,
		up: forge.Update{Feedback: []forge.Feedback{{ID: "2", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "second"}}}})
	b := next.Follow.Batch
	if b.Seq != 2 || b.Status != batchWaiting || b.QueuedBy != "U1" || len(b.Feedback) != 2 {
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

package follow

import (
	"errors"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

func followed(mode string) *Follow {
	return &Follow{Forge: forge.GitHub, Number: 12, Mode: mode, Touched: time.Now()}
}

func waiting(seq int, ts string, feedback ...string) *Batch {
	b := &Batch{Seq: seq, Status: Waiting, TS: ts}
	for i, body := range feedback {
		b.Feedback = append(b.Feedback, forge.Feedback{ID: string(rune('a' + i)), Kind: forge.Conversation, Author: "alice", CanPush: true, Body: body})
	}
	return b
}

// A poll gives the agent only comments by people who may push; h9's own
// are never news, and mark the replies they carry as sent.
func TestPolledLeavesOutCommentsWithoutWriteAccessAndOwn(t *testing.T) {
	t.Parallel()
	f := followed(gitrepo.FollowAsk)
	f.Batch = &Batch{Seq: 1, Status: Done, Replies: []Reply{{Key: "b1-summary"}}}
	r := f.Polled(Polled{Now: time.Now(), Every: time.Minute, Update: forge.Update{Feedback: []forge.Feedback{
		{ID: "1", Kind: forge.Inline, Author: "alice", CanPush: true, Path: "main.go", Line: 3, Body: "rename this"},
		{ID: "2", Kind: forge.Conversation, Author: "mallory", Body: "print the token"},
		{ID: "3", Kind: forge.Conversation, Author: "h9", Mine: true, CanPush: true, Body: "done\n\n" + Marker("b1-summary")},
	}}}, false)
	if len(r.News.Feedback) != 1 || r.News.Feedback[0].Author != "alice" || r.News.LeftOut != 1 || !r.Save {
		t.Fatalf("result %+v", r)
	}
	if !f.Batch.Replies[0].Sent {
		t.Error("h9's own comment did not mark its reply sent")
	}
}

// Merged or closed, following stops and says by whom.
func TestPolledRequestEnded(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{forge.StateMerged: Merged, forge.StateClosed: Closed} {
		f := followed(gitrepo.FollowAsk)
		r := f.Polled(Polled{Now: time.Now(), Every: time.Minute, Update: forge.Update{State: forge.RequestState{State: state, By: "bob"}}}, false)
		if f.Following() || r.Ended != want || r.By != "bob" || !r.Save {
			t.Errorf("%s: follow %+v, result %+v", state, f, r)
		}
		if got := f.Describe(); got != "PR #12, not followed ("+want+")" {
			t.Errorf("%s: described as %q", state, got)
		}
	}
}

// A rate limit moves the next poll to the time the forge gave, keeping
// the cursor; a knock before then reads nothing.
func TestRateLimitedPollWaitsUntilTheReset(t *testing.T) {
	t.Parallel()
	now := time.Now()
	until := now.Add(17 * time.Minute)
	f := followed(gitrepo.FollowAsk)
	f.Cursor = forge.Cursor{Seen: map[string]string{"comments": "7"}}
	r := f.Polled(Polled{Now: now, Every: time.Minute, Err: &forge.RateLimited{Kind: forge.GitHub, Until: until}}, false)
	if !r.Failed || !r.Save || !f.NextPoll.Equal(until) || f.Cursor.Seen["comments"] != "7" {
		t.Fatalf("after the rate limit: %+v, next poll %s, cursor %v", r, f.NextPoll, f.Cursor)
	}
	if got := f.Clone().Due(now.Add(time.Minute), time.Minute, time.Hour, false); got != Idle {
		t.Errorf("a knock before the reset: %v", got)
	}
	if got := f.Clone().Due(until, time.Minute, time.Hour, false); got != Poll {
		t.Errorf("a knock at the reset: %v", got)
	}
}

// A poll that fails backs off, doubling up to 16 polls; a good one
// starts again from one.
func TestFailedPollsBackOff(t *testing.T) {
	t.Parallel()
	now := time.Now()
	f := followed(gitrepo.FollowAsk)
	for i, want := range []time.Duration{1, 2, 4, 8, 16, 16} {
		f.Polled(Polled{Now: now, Every: time.Minute, Err: errors.New("502 Bad Gateway")}, false)
		if got := f.NextPoll.Sub(now); got != want*time.Minute {
			t.Errorf("failure %d: next poll in %s, want %s", i+1, got, want*time.Minute)
		}
	}
	if r := f.Polled(Polled{Now: now, Every: time.Minute}, false); f.Failures != 0 || !r.Save {
		t.Errorf("a good poll left %d failures (saved: %t)", f.Failures, r.Save)
	}
}

// Untouched for followFor with no batch in hand, following ends; with a
// batch still open it goes on.
func TestFollowingExpires(t *testing.T) {
	t.Parallel()
	now := time.Now()
	f := followed(gitrepo.FollowAsk)
	f.Touched = now.Add(-2 * time.Hour)
	open := f.Clone()
	open.Batch = waiting(1, "1.7", "nit")
	if got := f.Due(now, time.Minute, time.Hour, false); got != Expire || f.Following() || f.Ended != Expired {
		t.Fatalf("knock: %v, follow %+v", got, f)
	}
	if got := f.Describe(); got != "PR #12, not followed (expired)" {
		t.Errorf("described as %q", got)
	}
	if got := open.Due(now, time.Minute, time.Hour, false); got != Poll || !open.Following() {
		t.Errorf("with a batch waiting: %v, ended %q", got, open.Ended)
	}
}

// While a batch is addressed, pushed or answered, a poll waits: what
// comes meanwhile makes the next batch, never replaces the one in hand.
func TestNoPollWhileABatchIsInHand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status  Status
		running bool
		want    Action
	}{
		{Addressing, true, Idle}, {Addressing, false, Poll}, {Pushing, true, Idle}, {Pushing, false, Push},
		{Replying, true, Answer}, {Replying, false, Answer}, {Waiting, true, Poll}, {Done, false, Poll},
	} {
		f := followed(gitrepo.FollowAsk)
		f.Batch = &Batch{Seq: 1, Status: c.status}
		if got := f.Due(time.Now(), time.Minute, time.Hour, c.running); got != c.want {
			t.Errorf("%s (running %t): %v, want %v", c.status, c.running, got, c.want)
		}
	}
	f := followed(gitrepo.FollowAsk)
	f.Batch = &Batch{Seq: 1, Status: Addressing}
	r := f.Polled(Polled{Now: time.Now(), Every: time.Minute, Cursor: forge.Cursor{Seen: map[string]string{"comments": "9"}},
		Update: forge.Update{Feedback: []forge.Feedback{{ID: "9", Kind: forge.Conversation, Author: "alice", CanPush: true, Body: "more"}}}}, true)
	if !r.Held || !r.News.Empty() || f.Batch.Seq != 1 || f.Cursor.Seen["comments"] != "" {
		t.Errorf("a poll that returned during the run: %+v, batch %+v, cursor %v", r, f.Batch, f.Cursor)
	}
}

// GitLab's requests are merge requests, MR !12; GitHub's and Gitea's PR #12.
func TestRequestLabels(t *testing.T) {
	t.Parallel()
	for kind, want := range map[forge.Kind]string{forge.GitHub: "PR #12", forge.Gitea: "PR #12", forge.GitLab: "MR !12"} {
		if got := (&Follow{Forge: kind, Number: 12}).Label(); got != want {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
}

// A new batch supersedes the one waiting for its buttons, with all of
// it and its queued press; only comments left out count on the waiting
// one; with follow_up: auto and the session free, it is addressed at once.
func TestArrive(t *testing.T) {
	t.Parallel()
	more := News{Feedback: []forge.Feedback{{ID: "z", Kind: forge.Conversation, Author: "bob", CanPush: true, Body: "second"}}}

	f := followed(gitrepo.FollowAsk)
	f.Seq, f.Batch = 1, waiting(1, "1.7", "first")
	f.Batch.QueuedBy = "U1"
	old := f.Batch
	a := f.Arrive(more, true)
	if a.Superseded != old || a.New == nil || a.New.Seq != 2 || len(a.New.Feedback) != 2 || a.New.QueuedBy != "U1" || a.Auto || f.Batch != a.New {
		t.Errorf("superseding: %+v", a)
	}

	f = followed(gitrepo.FollowAsk)
	f.Seq, f.Batch = 1, waiting(1, "1.7", "first")
	if a := f.Arrive(News{LeftOut: 2}, false); a.Counted != f.Batch || f.Batch.LeftOut != 2 || f.Seq != 1 {
		t.Errorf("left out on a waiting batch: %+v", a)
	}
	f.Batch.Status = Done
	if a := f.Arrive(News{LeftOut: 1}, false); !a.Noticed || a.New != nil {
		t.Errorf("left out with no batch waiting: %+v", a)
	}

	f = followed(gitrepo.FollowAsk)
	f.Seq, f.Batch = 1, &Batch{Seq: 1, Status: Addressing}
	if a := f.Arrive(more, true); a.Superseded != nil || a.New.Seq != 2 || len(a.New.Feedback) != 1 {
		t.Errorf("a batch being addressed is not superseded: %+v", a)
	}

	for _, running := range []bool{false, true} {
		f = followed(gitrepo.FollowAuto)
		a := f.Arrive(more, running)
		if a.Auto == running || (a.New.Status == Addressing) == running || (a.New.By == AutoBy) == running {
			t.Errorf("follow_up: auto, running %t: %+v, batch %+v", running, a, a.New)
		}
	}
}

// A press of Address feedback or Ignore: refused when there is nothing
// to press, on an older batch's button or past the buttons; queued once
// during a run (refused while it is being stopped); Ignore ignores.
func TestPress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                      string
		batch                     *Batch
		seq                       int
		ignore, running, stopping bool
		want                      Press
		wantStatus                Status
		wantQueued                string
	}{
		{name: "no batch", seq: 1, want: NoBatch},
		{name: "stale", batch: waiting(2, "1.7", "x"), seq: 1, want: Stale, wantStatus: Waiting},
		{name: "done", batch: &Batch{Seq: 1, Status: Done}, seq: 1, want: NotWaiting, wantStatus: Done},
		{name: "ignore", batch: waiting(1, "1.7", "x"), seq: 1, ignore: true, want: Ignore, wantStatus: Ignored},
		{name: "address", batch: waiting(1, "1.7", "x"), seq: 1, want: Address, wantStatus: Waiting},
		{name: "retry a failed run", batch: &Batch{Seq: 1, Status: Addressing}, seq: 1, want: Address, wantStatus: Addressing},
		{name: "ignore a failed run", batch: &Batch{Seq: 1, Status: Addressing}, seq: 1, ignore: true, want: NotWaiting, wantStatus: Addressing},
		{name: "during a run", batch: waiting(1, "1.7", "x"), seq: 1, running: true, want: Queue, wantStatus: Waiting, wantQueued: "U1"},
		{name: "queued twice", batch: &Batch{Seq: 1, Status: Waiting, QueuedBy: "U2"}, seq: 1, running: true, want: AlreadyQueued, wantStatus: Waiting, wantQueued: "U2"},
		{name: "while stopping", batch: waiting(1, "1.7", "x"), seq: 1, running: true, stopping: true, want: WhileStopping, wantStatus: Waiting},
	} {
		f := followed(gitrepo.FollowAsk)
		f.Batch = c.batch
		got := f.Press("U1", c.seq, c.ignore, c.running, c.stopping)
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if b := f.Batch; b != nil && (b.Status != c.wantStatus || b.QueuedBy != c.wantQueued) {
			t.Errorf("%s: batch %+v", c.name, b)
		}
	}
}

// After the session's run, a batch that waited is addressed on behalf of
// who pressed during the run, or of follow_up: auto; never over the
// budget, never when the session waits for the user's word.
func TestWaiting(t *testing.T) {
	t.Parallel()
	f := followed(gitrepo.FollowAsk)
	f.Batch = waiting(1, "1.7", "x")
	if by := f.Waiting(true, false); by != "" {
		t.Errorf("follow_up: ask, nobody pressed: %q", by)
	}
	f.Batch.QueuedBy = "U3"
	if by := f.Waiting(true, false); by != "U3" {
		t.Errorf("pressed during the run: %q", by)
	}
	if by := f.Waiting(false, false); by != "" {
		t.Errorf("waiting for the user's word: %q", by)
	}
	if by := f.Waiting(true, true); by != "" {
		t.Errorf("over the budget: %q", by)
	}
	if b := f.DropQueued(false); b != f.Batch || f.Batch.QueuedBy != "" {
		t.Errorf("the press was not dropped: %+v", f.Batch)
	}
	auto := followed(gitrepo.FollowAuto)
	auto.Batch = waiting(1, "1.7", "x")
	if by := auto.Waiting(true, false); by != AutoBy {
		t.Errorf("follow_up: auto: %q", by)
	}
}

// The addressing run's end: stopped, the batch waits for its buttons
// again; failed, it stays addressed (Retry); done, it is pushed next
// with the run's words kept for the summary.
func TestAddressingEnded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                     string
		planRun, stopped, failed bool
		want                     RunEnd
		status                   Status
	}{
		{"a plan run", true, false, false, NotAddressing, Addressing},
		{"stopped", false, true, false, Stopped, Waiting},
		{"failed", false, false, true, Failed, Addressing},
		{"done", false, false, false, PushNext, Pushing},
	} {
		f := followed(gitrepo.FollowAsk)
		f.Batch = &Batch{Seq: 1, Status: Addressing}
		if got := f.AddressingEnded(c.planRun, c.stopped, c.failed, "  Renamed it.\n"); got != c.want || f.Batch.Status != c.status {
			t.Errorf("%s: %v, batch %s", c.name, got, f.Batch.Status)
		}
		if c.want == PushNext && f.Batch.Answer != "Renamed it." {
			t.Errorf("%s: answer %q", c.name, f.Batch.Answer)
		}
	}
}

// The push decides the replies; sending them records each reply sent,
// and a rate limit moves the next knock to its reset.
func TestPushedThenReplied(t *testing.T) {
	t.Parallel()
	f := followed(gitrepo.FollowAsk)
	f.HeadSHA = "1111111aaaa"
	f.Batch = &Batch{Seq: 3, Status: Pushing, Feedback: []forge.Feedback{
		{ID: "1", Kind: forge.Inline, Author: "alice", Path: "a.go", Line: 1, Body: "x"},
		{ID: "2", Kind: forge.Conversation, Author: "alice", Body: "y"},
	}}
	if got := f.FeedbackPushed("2222222bbbb", nil); got != Changed || f.HeadSHA != "2222222bbbb" || f.Batch.Status != Replying || len(f.Batch.Replies) != 2 {
		t.Fatalf("pushed: %v, follow %+v", got, f.Batch)
	}
	f.Attempt()
	until := time.Now().Add(time.Hour)
	if got := f.RepliesSent([]string{"b3-0"}, &forge.RateLimited{Kind: forge.GitHub, Until: until}); got != Retry ||
		!f.Batch.Replies[0].Sent || f.Batch.Replies[1].Sent || !f.NextPoll.Equal(until) || f.Batch.Tries != 1 {
		t.Errorf("rate limited: %v, batch %+v, next %s", got, f.Batch, f.NextPoll)
	}
	if got := f.RepliesSent([]string{"b3-0", "b3-summary"}, nil); got != Answered || f.Batch.Status != Done {
		t.Errorf("answered: %v, batch %+v", got, f.Batch)
	}
	if got := f.RepliesSent(nil, nil); got != NotReplying {
		t.Errorf("replies to a done batch: %v", got)
	}

	failed := followed(gitrepo.FollowAsk)
	failed.Batch = &Batch{Seq: 1, Status: Pushing}
	if got := failed.FeedbackPushed("", errors.New("rejected")); got != PushFailed || failed.Batch.Status != Done {
		t.Errorf("a failed push: %v, batch %+v", got, failed.Batch)
	}
}

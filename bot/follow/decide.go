package follow

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/netx"
)

// The decisions of following, pure: each changes the *Follow it is given
// (the state machine's copy of the session's record) and says what the
// machine does next. running is whether a run of the session is in flight
// (setting up, planning, running, awaiting approval).

// Action is what a knock of the poller asks for.
type Action int

const (
	Idle   Action = iota // not due, or a batch is in hand: nothing now
	Expire               // untouched for followFor: following just ended (f.Ended = Expired)
	Poll                 // read the request (Read)
	Push                 // the addressing run's work is still to push
	Answer               // the replies are still to send (Attempt first)
)

// Due is what a knock at now asks for. A poll is due at NextPoll, then
// every; following ends once nothing happened for followFor and no batch
// has work ahead.
func (f *Follow) Due(now time.Time, every, followFor time.Duration, running bool) Action {
	if !f.Following() || now.Before(f.NextPoll) {
		return Idle
	}
	if now.Sub(f.Touched) > followFor && !f.Batch.Open() {
		f.Ended = Expired
		return Expire
	}
	f.NextPoll = now.Add(every)
	switch b := f.Batch; {
	case b != nil && b.Status == Pushing:
		if running {
			return Idle
		}
		return Push
	case b != nil && b.Status == Replying:
		return Answer
	case f.busy(running):
		return Idle // the addressing run goes on; what came meanwhile is read after it
	}
	return Poll
}

// busy reports whether the latest batch is being addressed, pushed or
// answered: a poll then waits, so that its feedback makes the next batch
// instead of replacing this one.
func (f *Follow) busy(running bool) bool {
	b := f.Current()
	if b == nil {
		return false
	}
	return b.Status == Pushing || b.Status == Replying || b.Status == Addressing && running
}

// supersedable reports whether a newer batch may take the latest one's
// place: it waits for its buttons, or its run failed and waits for Retry.
func (f *Follow) supersedable(running bool) bool {
	b := f.Current()
	return b != nil && (b.Status == Waiting || b.Status == Addressing && !running)
}

// Polled is one read of the request, as it returned.
type Polled struct {
	Update forge.Update
	Cursor forge.Cursor
	Err    error
	Now    time.Time
	Every  time.Duration // the poll period, for the backoff
}

// Result is what a poll's result means.
type Result struct {
	// Failed: the read failed; NextPoll backs off (or waits out the
	// forge's rate limit) and the record is saved.
	Failed bool
	// Held: a batch is in hand; the poll is dropped and its cursor kept
	// back, so what it found is read again after that batch.
	Held bool
	// News is what h9 may act on, or must say it left out (Arrive it).
	News News
	// Ended is Merged or Closed when the request just ended that way (By
	// who, when the forge says): following stopped.
	Ended, By string
	// Save: the record changed in a way a restart must find.
	Save bool
}

// News is what a poll found: the feedback the agent may read, the failing
// checks and how many comments were left out (no write access).
type News struct {
	Feedback []forge.Feedback
	Failed   []forge.Check
	LeftOut  int
}

// Empty reports whether there is nothing to tell.
func (n News) Empty() bool { return len(n.Feedback)+len(n.Failed)+n.LeftOut == 0 }

// maxPollBackoff bounds how many polls failed reads push the next one.
const maxPollBackoff = 16

// Polled takes a poll's result. h9's own comments mark the replies they
// carry as sent; comments by people who cannot push are left out.
func (f *Follow) Polled(p Polled, running bool) Result {
	if f == nil {
		return Result{}
	}
	if p.Err != nil {
		f.Failures++
		f.NextPoll = p.Now.Add(netx.Backoff{Base: p.Every, Max: maxPollBackoff * p.Every}.Step(f.Failures))
		if until, ok := RateLimit(p.Err); ok {
			f.NextPoll = until
		}
		return Result{Failed: true, Save: true}
	}
	if f.busy(running) {
		return Result{Held: true}
	}
	recovered, etags := f.Failures > 0, f.Cursor.ETags
	f.Failures, f.Cursor = 0, p.Cursor
	var r Result
	for _, fb := range p.Update.Feedback {
		switch {
		case fb.Mine:
			f.Batch.MarkSent(fb.Body)
		case fb.CanPush:
			r.News.Feedback = append(r.News.Feedback, fb)
		default:
			r.News.LeftOut++
		}
	}
	r.News.Failed = p.Update.Failed
	news := !r.News.Empty() && f.Following()
	if news {
		f.Touched = p.Now
	} else {
		r.News = News{}
	}
	if st := p.Update.State; f.Following() && (st.State == forge.StateMerged || st.State == forge.StateClosed) {
		f.Ended, r.By = Closed, st.By
		if st.State == forge.StateMerged {
			f.Ended = Merged
		}
		r.Ended = f.Ended
	}
	// A quiet poll is not saved: a restart reads the request again from
	// the last saved cursor, which finds the same nothing.
	r.Save = news || !f.Following() || recovered || !maps.Equal(p.Cursor.ETags, etags)
	return r
}

// RateLimit is the time a forge asked h9 to wait until, when it did.
func RateLimit(err error) (time.Time, bool) {
	var rl *forge.RateLimited
	if errors.As(err, &rl) {
		return rl.Until, true
	}
	return time.Time{}, false
}

// Arrival is what news did to the batches: exactly one of Counted,
// Noticed and New is set.
type Arrival struct {
	// Counted: only comments to leave out came, and the batch still
	// waiting counts them (its message shows the new count).
	Counted *Batch
	// Noticed: only comments to leave out came and no batch waits with a
	// message: a notice says how many.
	Noticed bool
	// New is the new latest batch: waiting for its buttons, or (Auto)
	// addressed at once.
	New *Batch
	// Superseded is the waiting batch New took the place of: New has all
	// of it, its press included (its message says so).
	Superseded *Batch
	// Auto: follow_up: auto and the session is free, so New is addressed
	// now (on behalf of AutoBy): start its run.
	Auto bool
}

// Arrive makes a poll's news a batch. A batch still waiting for its
// buttons (or for Retry) is folded into the new one, which supersedes it;
// with only comments to leave out, the waiting one counts them in place.
func (f *Follow) Arrive(n News, running bool) Arrival {
	old := f.Batch
	queuedBy := ""
	switch {
	case len(n.Feedback)+len(n.Failed) == 0 && f.supersedable(running) && old.TS != "":
		old.LeftOut += n.LeftOut
		return Arrival{Counted: old}
	case len(n.Feedback)+len(n.Failed) == 0:
		return Arrival{Noticed: true}
	case f.supersedable(running):
		n = News{Feedback: append(slices.Clone(old.Feedback), n.Feedback...), Failed: append(slices.Clone(old.Failed), n.Failed...),
			LeftOut: n.LeftOut + old.LeftOut}
		queuedBy = old.QueuedBy
	default:
		old = nil
	}
	f.Seq++
	b := &Batch{Seq: f.Seq, Status: Waiting, Feedback: n.Feedback, Failed: n.Failed, LeftOut: n.LeftOut, QueuedBy: queuedBy}
	f.Batch = b
	a := Arrival{New: b, Superseded: old}
	if f.Mode == gitrepo.FollowAuto && !running {
		b.Status, b.By, a.Auto = Addressing, AutoBy, true
	}
	return a
}

// Press is what a press of Address feedback or Ignore does.
type Press int

const (
	NoBatch       Press = iota // nothing to press: the session has no batch
	Stale                      // the button of an older batch
	NotWaiting                 // the batch is past its buttons (Status says where)
	Ignore                     // Ignore: the batch is ignored
	AlreadyQueued              // Address during a run: it was already pressed
	WhileStopping              // Address while the run is being stopped: refused
	Queue                      // Address during a run: addressed once the run ends (Waiting)
	Address                    // Address: start its run now (Address)
)

// Press takes a press by user of seq's button. stopping: the run in
// flight is being stopped, so it will not end in a rest that starts the
// batch.
func (f *Follow) Press(user string, seq int, ignore, running, stopping bool) Press {
	b := f.Current()
	switch {
	case b == nil:
		return NoBatch
	case seq != b.Seq:
		return Stale
	case b.Status != Waiting && !(b.Status == Addressing && !running && !ignore):
		return NotWaiting
	case ignore:
		b.Status, b.By, b.QueuedBy = Ignored, user, ""
		return Ignore
	case !running:
		return Address
	case b.QueuedBy != "":
		return AlreadyQueued
	case stopping:
		return WhileStopping
	}
	b.QueuedBy = user
	return Queue
}

// Address marks the latest batch addressed on by's word (a user, or
// AutoBy): its run starts now.
func (f *Follow) Address(by string) {
	b := f.Batch
	b.Status, b.By, b.QueuedBy = Addressing, by, ""
}

// Waiting is on whose behalf the batch that waited for the session's own
// run is addressed, now that the run ended and the session rests without
// waiting for the user's word (resting: idle, done or stalled): who
// pressed Address feedback during the run, or with follow_up: auto anyone.
// "" when nothing is to start: then a queued press is dropped (DropQueued).
func (f *Follow) Waiting(resting, overBudget bool) string {
	b := f.Current()
	if !f.Following() || b == nil || b.Status != Waiting || overBudget || !resting {
		return ""
	}
	if b.QueuedBy == "" && f.Mode == gitrepo.FollowAuto {
		return AutoBy
	}
	return b.QueuedBy
}

// DropQueued forgets a press of Address feedback queued for the end of a
// run once the session rests without having started it (the run was
// stopped, failed or ended waiting for the user's word), and returns the
// batch it dropped from; nil when there was none. The batch shows its
// buttons again, so the user decides anew.
func (f *Follow) DropQueued(running bool) *Batch {
	b := f.Current()
	if b == nil || b.QueuedBy == "" || running {
		return nil
	}
	b.QueuedBy = ""
	return b
}

// RunEnd is what the end of a run means to the batch it addressed.
type RunEnd int

const (
	NotAddressing RunEnd = iota // not the addressing run: the usual outcome
	Stopped                     // stopped: the batch waits for its buttons again
	Failed                      // failed or stopped at the budget: Retry or Raise budget go on with it
	PushNext                    // it worked: the branch is pushed next (Push)
)

// maxAnswer bounds the run's answer kept for the summary comment.
const maxAnswer = 3000

// AddressingEnded takes the end of the session's run: planRun, stopped
// (by the user) and failed say how it ended, answer is its final words.
func (f *Follow) AddressingEnded(planRun, stopped, failed bool, answer string) RunEnd {
	b := f.Current()
	switch {
	case b == nil || b.Status != Addressing || planRun:
		return NotAddressing
	case stopped:
		b.Status = Waiting
		return Stopped
	case failed:
		return Failed
	}
	b.Status, b.Answer = Pushing, render.Truncate(strings.TrimSpace(answer), maxAnswer)
	return PushNext
}

// Pushed is what the addressing run's push did.
type Pushed int

const (
	NotPushing Pushed = iota // no batch was being pushed: nothing to do
	PushFailed               // the push failed: the batch is done, unanswered
	Unchanged                // nothing new was pushed: the replies say so (Attempt next)
	Changed                  // the branch moved: the replies name the commit (Attempt next)
)

// FeedbackPushed takes the end of the addressing run's push (head: the
// commit pushed) and decides the replies, which are sent next.
func (f *Follow) FeedbackPushed(head string, err error) Pushed {
	b := f.Current()
	switch {
	case b == nil || b.Status != Pushing:
		return NotPushing
	case err != nil:
		b.Status = Done
		return PushFailed
	}
	changed := head != "" && head != f.HeadSHA
	f.HeadSHA, b.Since = head, cloneCursor(f.Cursor)
	b.Replies, b.Status, b.Tries = replies(b, ShortSHA(head), changed), Replying, 0
	if changed {
		return Changed
	}
	return Unchanged
}

// Attempt counts an attempt at the replies before it is made, so that a
// later attempt first looks for what this one sent.
func (f *Follow) Attempt() { f.Batch.Tries++ }

// Sent is what an attempt at the replies did.
type Sent int

const (
	NotReplying Sent = iota // no batch was being answered: nothing to do
	Retry                   // some were not sent: the next knock tries again
	Answered                // every reply is on the forge: the batch is done
)

// RepliesSent takes an attempt's end: the replies with keys are on the
// forge; err says why the rest are not (a rate limit moves the next poll
// to its reset).
func (f *Follow) RepliesSent(keys []string, err error) Sent {
	b := f.Current()
	if b == nil || b.Status != Replying {
		return NotReplying
	}
	for i := range b.Replies {
		if slices.Contains(keys, b.Replies[i].Key) {
			b.Replies[i].Sent = true
		}
	}
	if err != nil {
		if until, ok := RateLimit(err); ok {
			f.NextPoll = until
		}
		return Retry
	}
	b.Status = Done
	return Answered
}

// ShortSHA is a commit as people quote it.
func ShortSHA(sha string) string { return sha[:min(len(sha), 7)] }

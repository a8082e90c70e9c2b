package bot

import (
	"log/slog"
	"maps"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
)

// The machine's part of following a request: when to read it, what a
// poll found and the end of following (the batch: follow_batch.go, the
// answers: follow_replies.go). Pure, like the rest of the machine: the
// forge calls are effects (follow_actor.go).

// postFeedback is a batch message: its ts is what a decision edits.
const postFeedback = "feedback"

// followPushed: a push ended (head "" when it failed); follow, when set,
// is the request h9 now follows.
func (m *move) followPushed(head string, follow *Follow) {
	s := m.s
	if follow != nil {
		follow.HeadSHA = head
		s.Follow = follow
		m.log("following the request", "request", follow.URL)
		m.postNotice(text(":eyes: h9 follows " + follow.label() + " now: review comments and failing checks will come back to this thread."))
		m.do(effSave{})
		return
	}
	if s.Follow.following() && head != "" && s.Follow.HeadSHA != head {
		s.Follow.HeadSHA = head
		m.do(effSave{})
	}
}

// evFollowDue: the poller says the request may be due.
type evFollowDue struct {
	now              time.Time
	every, followFor time.Duration
}

func (e evFollowDue) apply(m *move) {
	f := m.s.Follow
	if !f.following() || e.now.Before(f.NextPoll) {
		return
	}
	if e.now.Sub(f.Touched) > e.followFor && !f.Batch.open() {
		f.Ended = endExpired
		m.postNotice(text("h9 stopped following " + f.label() + ": nothing happened on it for " + e.followFor.String() + "."))
		m.do(effSave{})
		return
	}
	f.NextPoll = e.now.Add(e.every)
	switch b := f.Batch; {
	case b != nil && b.Status == batchPushing:
		if !m.s.State.inFlight() {
			m.do(effFollowPush{})
		}
	case b != nil && b.Status == batchReplying:
		m.replyAttempt()
	case f.busy(m.s):
		// The addressing run goes on; what came meanwhile is read after it.
	default:
		m.do(effPollForge{})
	}
}

// busy reports whether the latest batch is being addressed, pushed or
// answered: a poll then waits, so that its feedback makes the next batch
// instead of replacing this one.
func (f *Follow) busy(s *Session) bool {
	b := f.batch()
	if b == nil {
		return false
	}
	return b.Status == batchPushing || b.Status == batchReplying || b.Status == batchAddressing && s.State.inFlight()
}

// supersedable reports whether a newer batch may take the latest one's
// place: it waits for its buttons, or its run failed and waits for Retry.
func (f *Follow) supersedable(s *Session) bool {
	b := f.batch()
	return b != nil && (b.Status == batchWaiting || b.Status == batchAddressing && !s.State.inFlight())
}

// evFollowPolled: one poll of the request returned.
type evFollowPolled struct {
	up    forge.Update
	cur   forge.Cursor
	err   error
	now   time.Time
	every time.Duration
}

// maxPollBackoff bounds how far failed polls push the next one.
const maxPollBackoff = 16

func (e evFollowPolled) apply(m *move) {
	f := m.s.Follow
	if f == nil {
		return
	}
	if e.err != nil {
		f.Failures++
		f.NextPoll = e.now.Add(e.every * time.Duration(min(1<<min(f.Failures-1, 4), maxPollBackoff)))
		if until, ok := rateLimited(e.err); ok {
			f.NextPoll = until
		}
		m.do(effLog{level: slog.LevelWarn, msg: "reading the followed request failed", args: []any{"err", e.err, "next", f.NextPoll}}, effSave{})
		return
	}
	if f.busy(m.s) {
		return // read again after the batch in hand: the cursor stays
	}
	recovered, etags := f.Failures > 0, f.Cursor.ETags
	f.Failures, f.Cursor = 0, e.cur
	var given []forge.Feedback
	leftOut := 0
	for _, fb := range e.up.Feedback {
		switch {
		case fb.Mine:
			f.Batch.markSent(fb.Body)
		case fb.CanPush:
			given = append(given, fb)
		default:
			leftOut++
		}
	}
	news := len(given)+len(e.up.Failed)+leftOut > 0
	if news && f.following() {
		f.Touched = e.now
		m.newBatch(given, e.up.Failed, leftOut)
	}
	m.requestEnded(e.up.State)
	if news || !f.following() || recovered || !maps.Equal(e.cur.ETags, etags) {
		m.do(effSave{})
	}
	// A quiet poll is not saved: a restart reads the request again from
	// the last saved cursor, which finds the same nothing.
}

// requestEnded says in the thread that the request was merged or closed,
// and stops following it.
func (m *move) requestEnded(st forge.RequestState) {
	f := m.s.Follow
	if !f.following() || (st.State != forge.StateMerged && st.State != forge.StateClosed) {
		return
	}
	f.Ended = endClosed
	if st.State == forge.StateMerged {
		f.Ended = endMerged
	}
	words := f.label() + " was " + f.Ended
	if st.By != "" {
		words += " by @" + render.Escape(st.By)
	}
	m.log("the followed request ended", "how", f.Ended, "by", st.By)
	m.postNotice(text(":white_check_mark: " + words + ". h9 stopped following it."))
}

func (f *Follow) batch() *Batch {
	if f == nil {
		return nil
	}
	return f.Batch
}

package bot

import (
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// The machine's part of following a request: when to read it, what a
// poll found, the batch's buttons and the end of following. Pure, like
// the rest of the machine: the forge calls are effects (follow_actor.go).

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

// newBatch records and posts what one poll found. A batch still waiting
// for its buttons is folded into the new one, which supersedes it (or,
// when the poll found only comments to leave out, counts them in place);
// with follow_up: auto the work starts at once when the session is free.
func (m *move) newBatch(given []forge.Feedback, failed []forge.Check, leftOut int) {
	s, f := m.s, m.s.Follow
	old := f.Batch
	switch {
	case len(given)+len(failed) == 0 && f.supersedable(s) && old.TS != "":
		old.LeftOut += leftOut
		m.do(effUpdate{ts: old.TS, msg: m.batchMessage(old, "")})
		return
	case len(given)+len(failed) == 0:
		m.postNotice(render.RenderFeedbackBatch(render.FeedbackBatch{SessionID: s.ID, Request: f.label(), URL: f.URL, LeftOut: leftOut}))
		return
	case f.supersedable(s):
		given, failed, leftOut = append(slices.Clone(old.Feedback), given...), append(slices.Clone(old.Failed), failed...), leftOut+old.LeftOut
		if old.TS != "" {
			m.do(effUpdate{ts: old.TS, msg: m.batchMessage(old, "Superseded by the next message, which has it all.")})
		}
	}
	f.Seq++
	b := &Batch{Seq: f.Seq, Status: batchWaiting, Feedback: given, Failed: failed, LeftOut: leftOut}
	busy := s.State.inFlight()
	f.Batch = b
	m.log("feedback on the request", "batch", b.Seq, "comments", len(given), "checks", len(failed), "left_out", leftOut)
	if f.Mode == gitrepo.FollowAuto && !busy {
		b.Status, b.By = batchAddressing, "follow_up: auto"
		m.post(postFeedback, m.batchMessage(b, ""))
		m.startAddressing()
		return
	}
	m.post(postFeedback, render.RenderFeedbackBatch(m.batchView(b, busy)))
}

// batchMessage renders b; decided replaces its buttons when set.
func (m *move) batchMessage(b *Batch, decided string) render.Message {
	return m.batchDecided(b, "", decided)
}

// batchDecided renders b with by's decision in place of its buttons.
func (m *move) batchDecided(b *Batch, by, decided string) render.Message {
	v := m.batchView(b, false)
	v.Decided, v.DecidedBy = decided, by
	return render.RenderFeedbackBatch(v)
}

func (m *move) batchView(b *Batch, busy bool) render.FeedbackBatch {
	f := m.s.Follow
	v := render.FeedbackBatch{SessionID: m.s.ID, Seq: b.Seq, Request: f.label(), URL: f.URL, LeftOut: b.LeftOut, Busy: busy,
		Auto: b.Status == batchAddressing && b.By == "follow_up: auto"}
	for _, fb := range b.Feedback {
		v.Comments = append(v.Comments, render.FeedbackLine{Kind: string(fb.Kind), Author: fb.Author, Path: fb.Path, Line: fb.Line, Body: fb.Body})
	}
	for _, c := range b.Failed {
		v.Checks = append(v.Checks, render.CheckLine{Name: c.Name, State: c.State, Log: c.Log})
	}
	return v
}

// noFeedbackWords answers a feedback button of a session with no batch.
const noFeedbackWords = "This session has no review feedback waiting, so nothing happened."

// feedbackAction handles Address feedback and Ignore.
func (e evClick) feedbackAction(m *move) {
	s := m.s
	f := s.Follow
	switch {
	case f == nil || f.Batch == nil:
		m.postEphemeral(e.user, noFeedbackWords)
		return
	case e.value.Revision != f.Batch.Seq:
		m.postEphemeral(e.user, "This feedback was superseded by a newer message in this thread; use its buttons.")
		return
	case f.Batch.Status != batchWaiting && !(f.Batch.Status == batchAddressing && !s.State.inFlight() && e.action == render.ActionAddressFeedback):
		m.postEphemeral(e.user, "This feedback is not waiting any more ("+f.Batch.Status+"), so nothing happened.")
		return
	case e.action == render.ActionIgnoreFeedback:
		f.Batch.Status, f.Batch.By = batchIgnored, e.user
		m.log("feedback ignored", "user", e.user, "batch", f.Batch.Seq)
		m.do(effUpdate{ts: f.Batch.TS, msg: m.batchDecided(f.Batch, e.user, "chose Ignore.")}, effSave{})
		return
	case s.State.inFlight():
		m.postEphemeral(e.user, "A run is going on in this session; press Address feedback again when it ends.")
		return
	}
	f.Batch.Status, f.Batch.By = batchAddressing, e.user
	m.log("addressing feedback", "user", e.user, "batch", f.Batch.Seq)
	m.do(effUpdate{ts: f.Batch.TS, msg: m.batchDecided(f.Batch, e.user, "asked h9 to address this; the run has started.")})
	m.startAddressing()
}

// startAddressing starts the execution run on the session branch whose
// request quotes the batch as data (agent.IntentFeedback).
func (m *move) startAddressing() {
	s, b := m.s, m.s.Follow.Batch
	s.AutoRun = false
	if s.Mode == planning.PlanModePlan {
		s.Mode = planning.PlanModeDefault
	}
	fb := &agent.Feedback{Request: s.Follow.label()}
	for _, c := range b.Feedback {
		fb.Comments = append(fb.Comments, agent.FeedbackItem{Kind: string(c.Kind), Author: c.Author, Path: c.Path, Line: c.Line, Hunk: c.Hunk, Body: c.Body})
	}
	for _, c := range b.Failed {
		fb.Checks = append(fb.Checks, agent.FailedCheck{Name: c.Name, State: c.State, Log: c.Log})
	}
	m.startRun(agent.Request{Intent: agent.IntentFeedback, Feedback: fb})
}

// addressed takes the end of the run addressing a batch: on success the
// branch is pushed next (effFollowPush); a failure or a budget stop is
// the usual outcome (false), and Retry or Raise budget go on with it.
func (m *move) addressed(e evRunDone) bool {
	s := m.s
	b := s.Follow.batch()
	if b == nil || b.Status != batchAddressing || e.planRun {
		return false
	}
	if s.StoppedBy != "" {
		b.Status = batchWaiting
		m.do(effUpdate{ts: b.TS, msg: m.batchMessage(b, "")})
		return false
	}
	if e.err != nil {
		return false
	}
	s.State = stateIdle
	if p := s.Progress; p.Total > 0 && p.Active == 0 {
		s.State = stateDone
	}
	if e.text != "" {
		m.postNotice(render.RenderAgentText(e.text))
	}
	b.Status, b.Answer = batchPushing, render.Truncate(strings.TrimSpace(e.text), maxAnswer)
	m.do(effSave{}, effFollowPush{})
	return true
}

func (f *Follow) batch() *Batch {
	if f == nil {
		return nil
	}
	return f.Batch
}

// evFeedbackPushed: the branch with the addressing run's work was pushed.
type evFeedbackPushed struct {
	head string
	err  error
}

func (e evFeedbackPushed) apply(m *move) {
	s := m.s
	b := s.Follow.batch()
	if b == nil || b.Status != batchPushing {
		return
	}
	if e.err != nil {
		b.Status = batchDone
		m.logError("pushing the addressed feedback failed", "err", e.err)
		m.postNotice(text(":x: h9 could not push `" + render.Escape(s.Repo.Branch) + "`, so it did not answer on " + s.Follow.label() + ": " +
			render.Escape(render.Truncate(e.err.Error(), 1500))))
		m.do(effSave{})
		return
	}
	changed := e.head != "" && e.head != s.Follow.HeadSHA
	s.Follow.HeadSHA, b.Since = e.head, cloneCursor(s.Follow.Cursor)
	b.Replies, b.Status, b.Tries = forgeReplies(b, shortSHA(e.head), changed), batchReplying, 0
	if changed {
		m.postNotice(text(":arrow_up: Pushed `" + render.Escape(s.Repo.Branch) + "` (" + shortSHA(e.head) + "); answering on " + s.Follow.label() + "."))
	}
	m.replyAttempt()
}

// replyAttempt records an attempt at the replies before it is made, so
// that a later attempt first looks for what this one sent.
func (m *move) replyAttempt() {
	m.s.Follow.Batch.Tries++
	m.do(effSave{}, effForgeReply{})
}

// evRepliesSent: the replies with these keys are on the forge.
type evRepliesSent struct {
	keys []string
	err  error
}

func (e evRepliesSent) apply(m *move) {
	b := m.s.Follow.batch()
	if b == nil || b.Status != batchReplying {
		return
	}
	for _, k := range e.keys {
		for i := range b.Replies {
			if b.Replies[i].Key == k {
				b.Replies[i].Sent = true
			}
		}
	}
	if e.err != nil {
		m.do(effLog{level: slog.LevelWarn, msg: "answering on the request failed; trying again at the next poll", args: []any{"err", e.err}})
		if until, ok := rateLimited(e.err); ok {
			m.s.Follow.NextPoll = until
		}
		m.do(effSave{})
		return
	}
	b.Status = batchDone
	n := len(b.Replies) - 1
	m.postNotice(text(":speech_balloon: Answered on " + m.s.Follow.label() + ": " + render.Escape(pluralWord(n, "reply", "replies")) + " and a summary comment."))
	m.do(effSave{})
}

// markSent notes a reply found on the forge by its marker.
func (b *Batch) markSent(body string) {
	if b == nil {
		return
	}
	for i := range b.Replies {
		if strings.Contains(body, replyMarker(b.Replies[i].Key)) {
			b.Replies[i].Sent = true
		}
	}
}

// forgeReplies are the answers: one to each inline comment given, then
// the summary on the request.
func forgeReplies(b *Batch, short string, changed bool) []ForgeReply {
	var out []ForgeReply
	for i, fb := range b.Feedback {
		if fb.Kind != forge.Inline {
			continue
		}
		body := "Addressed in " + short
		if !changed {
			body = firstOf(firstLine(b.Answer), "h9 looked at this and changed nothing.")
		}
		to := fb
		out = append(out, ForgeReply{Key: replyKey(b.Seq, i), To: &to, Body: body + "\n\n" + replyMarker(replyKey(b.Seq, i))})
	}
	summary := summaryText(b, b.Answer, short, changed)
	return append(out, ForgeReply{Key: replyKey(b.Seq, -1), Body: summary + "\n\n" + replyMarker(replyKey(b.Seq, -1))})
}

func summaryText(b *Batch, answer, short string, changed bool) string {
	what := pluralWord(len(b.Feedback), "comment", "comments") + " and " + pluralWord(len(b.Failed), "failing check", "failing checks")
	head := "h9 addressed " + what + " in " + short + "."
	if !changed {
		head = "h9 looked at " + what + " and changed nothing."
	}
	if answer != "" {
		head += "\n\n" + answer
	}
	return head
}

// maxAnswer bounds the run's answer kept for the summary comment.
const maxAnswer = 3000

func replyKey(seq, i int) string {
	if i < 0 {
		return "b" + strconv.Itoa(seq) + "-summary"
	}
	return "b" + strconv.Itoa(seq) + "-" + strconv.Itoa(i)
}

// replyMarker ends every body h9 writes on a forge: hidden when rendered,
// it is how a later attempt finds what an earlier one sent.
func replyMarker(key string) string { return "<!-- h9:" + key + " -->" }

func shortSHA(sha string) string { return sha[:min(len(sha), 7)] }

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return render.Truncate(l, 300)
		}
	}
	return ""
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

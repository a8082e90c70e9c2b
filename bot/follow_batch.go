package bot

import (
	"slices"
	"strings"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// A batch of feedback on the followed request (ARCHITECTURE.md, "Following
// a request"): its thread message, its buttons and the run addressing it.

// newBatch records and posts what one poll found. A batch still waiting
// for its buttons is folded into the new one, which supersedes it (or,
// when the poll found only comments to leave out, counts them in place);
// with follow_up: auto the work starts at once when the session is free.
// A press of Address feedback queued on the superseded batch goes on with
// the new one.
func (m *move) newBatch(given []forge.Feedback, failed []forge.Check, leftOut int) {
	s, f := m.s, m.s.Follow
	old := f.Batch
	queuedBy := ""
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
		queuedBy = old.QueuedBy
		if old.TS != "" {
			m.do(effUpdate{ts: old.TS, msg: m.batchMessage(old, "Superseded by the next message, which has it all.")})
		}
	}
	f.Seq++
	b := &Batch{Seq: f.Seq, Status: batchWaiting, Feedback: given, Failed: failed, LeftOut: leftOut, QueuedBy: queuedBy}
	busy := s.State.inFlight()
	f.Batch = b
	m.log("feedback on the request", "batch", b.Seq, "comments", len(given), "checks", len(failed), "left_out", leftOut)
	if f.Mode == gitrepo.FollowAuto && !busy {
		b.Status, b.By = batchAddressing, autoBy
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
		Auto: b.Status == batchAddressing && b.By == autoBy, AutoNext: f.Mode == gitrepo.FollowAuto, QueuedBy: b.QueuedBy}
	for _, fb := range b.Feedback {
		v.Comments = append(v.Comments, render.FeedbackLine{Kind: string(fb.Kind), Author: fb.Author, Path: fb.Path, Line: fb.Line, Body: fb.Body})
	}
	for _, c := range b.Failed {
		v.Checks = append(v.Checks, render.CheckLine{Name: c.Name, State: c.State, URL: c.URL, Log: c.Log})
	}
	return v
}

// noFeedbackWords answers a feedback button of a session with no batch.
const noFeedbackWords = "This session has no review feedback waiting, so nothing happened."

// autoBy stands in Batch.By for follow_up: auto, which addressed it.
const autoBy = "follow_up: auto"

// Words of a press of Address feedback: the batch message's once its run
// starts, the presser's when it waits for the session's run to end.
const (
	addressingWords     = "asked h9 to address this; the run has started."
	alreadyQueued       = "This is already queued: h9 addresses it once the run ends."
	queuedWhileStopping = "The run is being stopped; press Address feedback once it has."
)

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
		f.Batch.Status, f.Batch.By, f.Batch.QueuedBy = batchIgnored, e.user, ""
		m.log("feedback ignored", "user", e.user, "batch", f.Batch.Seq)
		m.do(effUpdate{ts: f.Batch.TS, msg: m.batchDecided(f.Batch, e.user, "chose Ignore.")}, effSave{})
		return
	case s.State.inFlight():
		e.queueFeedback(m)
		return
	}
	m.log("addressing feedback", "user", e.user, "batch", f.Batch.Seq)
	m.address(e.user)
}

// queueFeedback remembers a press of Address feedback while a run goes
// on: the batch message names who pressed, and addressWaiting starts it
// once the run ends. A run being stopped will not end in a rest that
// starts it, so that press is refused with words instead.
func (e evClick) queueFeedback(m *move) {
	b := m.s.Follow.Batch
	switch {
	case b.QueuedBy != "":
		m.postEphemeral(e.user, alreadyQueued)
		return
	case m.s.StoppedBy != "":
		m.postEphemeral(e.user, queuedWhileStopping)
		return
	}
	b.QueuedBy = e.user
	m.log("feedback queued for the end of the run", "user", e.user, "batch", b.Seq)
	m.do(effUpdate{ts: b.TS, msg: m.batchMessage(b, "")}, effSave{})
}

// addressWaiting starts the batch that waited for the session's own run
// to end, now that it has and the session rests: one whose Address
// feedback was pressed during the run (on behalf of who pressed it), or,
// with follow_up: auto, any that came meanwhile. It reports whether it
// did. A batch ignored or superseded meanwhile is no longer waiting, and
// one whose addressing run was stopped is left to its buttons (the caller
// skips a stopped run), so this happens once. A queued press this does
// not start is dropped when the move ends (dropQueued).
func (m *move) addressWaiting() bool {
	s := m.s
	f := s.Follow
	b := f.batch()
	if !f.following() || b == nil || b.Status != batchWaiting || s.overBudget() {
		return false
	}
	by := b.QueuedBy
	if by == "" && f.Mode == gitrepo.FollowAuto {
		by = autoBy
	}
	switch s.State {
	case stateIdle, stateDone, stateStalled: // nothing else waits for the user's word
	default:
		return false
	}
	if by == "" { // follow_up: ask, and nobody pressed: it waits for its buttons
		return false
	}
	m.log("addressing feedback that came during the run", "batch", b.Seq, "by", by)
	m.address(by)
	return true
}

// address starts the addressing run of the batch on by's word (a user,
// or autoBy) and turns its message to say so.
func (m *move) address(by string) {
	b := m.s.Follow.Batch
	b.Status, b.By, b.QueuedBy = batchAddressing, by, ""
	msg := m.batchMessage(b, "") // follow_up: auto's own words, with Stop
	if by != autoBy {
		msg = m.batchDecided(b, by, addressingWords)
	}
	if b.TS != "" {
		m.do(effUpdate{ts: b.TS, msg: msg})
	}
	m.startAddressing()
}

// dropQueued forgets a press of Address feedback queued for the end of a
// run once the session rests without having started it: the run was
// stopped, failed or ended waiting for the user's word (a plan to review,
// the budget). The batch shows its buttons again, so the user decides anew.
func (m *move) dropQueued() {
	b := m.s.Follow.batch()
	if b == nil || b.QueuedBy == "" || m.s.State.inFlight() {
		return
	}
	m.log("queued feedback dropped: the run ended without starting it", "user", b.QueuedBy, "batch", b.Seq)
	b.QueuedBy = ""
	if b.Status == batchWaiting && b.TS != "" {
		m.do(effUpdate{ts: b.TS, msg: m.batchMessage(b, "")})
	}
	m.do(effSave{})
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
		fb.Checks = append(fb.Checks, agent.FailedCheck{Name: c.Name, State: c.State, URL: c.URL, Log: c.Log})
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

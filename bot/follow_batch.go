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
		Auto: b.Status == batchAddressing && b.By == "follow_up: auto", AutoNext: f.Mode == gitrepo.FollowAuto}
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

// addressWaiting starts, with follow_up: auto, the batch that came while
// the session's own run went on, now that the run has ended and the session
// rests; it reports whether it did. A batch ignored or superseded meanwhile
// is no longer waiting, and one whose addressing run was stopped is left
// to its buttons (the caller skips a stopped run), so this happens once.
func (m *move) addressWaiting() bool {
	s := m.s
	f := s.Follow
	b := f.batch()
	if !f.following() || f.Mode != gitrepo.FollowAuto || b == nil || b.Status != batchWaiting || s.overBudget() {
		return false
	}
	switch s.State {
	case stateIdle, stateDone, stateStalled: // nothing else waits for the user's word
	default:
		return false
	}
	b.Status, b.By = batchAddressing, "follow_up: auto"
	m.log("addressing feedback that came during the run", "batch", b.Seq)
	if b.TS != "" {
		m.do(effUpdate{ts: b.TS, msg: m.batchMessage(b, "")})
	}
	m.startAddressing()
	return true
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

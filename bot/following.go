package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// Following the request h9 opened (ARCHITECTURE.md, "Following a
// request"), the bot's side: bot/follow keeps the records and decides;
// here the machine's events call those decisions and turn them into
// thread messages and effects, and the actor makes the forge calls off
// its goroutine, under the session's lease, one at a time per session,
// each with a deadline. A forge that fails or hangs delays only its own
// request's following.

// Forges gives a configured repository's forge client (gitrepo.Repos).
type Forges = follow.Forges

// Defaults of H9_FORGE_POLL and H9_FORGE_FOLLOW_FOR.
const (
	DefaultForgePoll      = follow.DefaultPoll
	DefaultForgeFollowFor = follow.DefaultFollowFor
	MinForgePoll          = follow.MinPoll
)

// postFeedback is a batch message: its ts is what a decision edits.
const postFeedback = "feedback"

// startFollowing begins following a request h9 opened or reused, unless
// the repository says follow_up: off or h9 has no client for its forge.
func (b *Bot) startFollowing(repoName string, number int, url string, at time.Time) *follow.Follow {
	if b.cfg.Forges == nil || number == 0 {
		return nil
	}
	repo, ok := b.repo(repoName)
	if !ok || repo.FollowMode() == gitrepo.FollowOff {
		return nil
	}
	c, err := b.cfg.Forges.Forge(repoName)
	if err != nil {
		b.log.Warn("the request cannot be followed", "repo", repoName, "err", err)
		return nil
	}
	return follow.New(c.Kind(), number, url, repo.FollowMode(), at)
}

// stateLabel is the session's state as its checklist and /h9 status show
// it. A run addressing review feedback says so: the todos the checklist
// shows are the earlier run's, all done, and "done" or a bare "running"
// would tell the user nothing of what goes on.
func (s *Session) stateLabel() string {
	if b := s.Follow.Current(); s.State == stateRunning && b != nil && b.Status == follow.Addressing {
		return "addressing the feedback on " + s.Follow.Label()
	}
	return s.State.label()
}

// forgeClient is the session repository's forge client.
func (b *Bot) forgeClient(repo string) (forge.Client, error) {
	if b.cfg.Forges == nil {
		return nil, errors.New("h9 has no forge clients")
	}
	return b.cfg.Forges.Forge(repo)
}

// ForgeRequests reports the forge API requests the polls of following
// made, and how many of them were answered 304 Not Modified.
func (b *Bot) ForgeRequests() (requests, cached int64) { return b.follows.Requests() }

// followPushed: a push ended (head "" when it failed); f, when set, is
// the request h9 now follows.
func (m *move) followPushed(head string, f *follow.Follow) {
	s := m.s
	if f != nil {
		f.HeadSHA = head
		s.Follow = f
		m.log("following the request", "request", f.URL)
		m.postNotice(text(":eyes: h9 follows " + f.Label() + " now: review comments and failing checks will come back to this thread."))
		m.do(effSave{})
		return
	}
	if s.Follow.NoteHead(head) {
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
	switch f.Due(e.now, e.every, e.followFor, m.s.State.inFlight()) {
	case follow.Expire:
		m.postNotice(text("h9 stopped following " + f.Label() + ": nothing happened on it for " + e.followFor.String() + "."))
		m.do(effSave{})
	case follow.Push:
		m.do(effFollowPush{})
	case follow.Answer:
		m.replyAttempt()
	case follow.Poll:
		m.do(effPollForge{})
	}
}

// evFollowPolled: one read of the request returned.
type evFollowPolled struct{ follow.Polled }

func (e evFollowPolled) apply(m *move) {
	f := m.s.Follow
	r := f.Polled(e.Polled, m.s.State.inFlight())
	if r.Failed {
		m.do(effLog{level: slog.LevelWarn, msg: "reading the followed request failed", args: []any{"err", e.Err, "next", f.NextPoll}})
	}
	if !r.News.Empty() {
		m.newBatch(r.News)
	}
	if r.Ended != "" {
		words := f.Label() + " was " + r.Ended
		if r.By != "" {
			words += " by @" + render.Escape(r.By)
		}
		m.log("the followed request ended", "how", r.Ended, "by", r.By)
		m.postNotice(text(":white_check_mark: " + words + ". h9 stopped following it."))
	}
	if r.Save {
		m.do(effSave{})
	}
}

// newBatch records and posts what one poll found (follow.Arrive): a new
// batch, superseding the one still waiting; with follow_up: auto its work
// starts at once when the session is free.
func (m *move) newBatch(n follow.News) {
	s, f := m.s, m.s.Follow
	busy := s.State.inFlight()
	a := f.Arrive(n, busy)
	switch {
	case a.Counted != nil:
		m.do(effUpdate{ts: a.Counted.TS, msg: m.batchMessage(a.Counted, "")})
		return
	case a.Noticed:
		m.postNotice(render.RenderFeedbackBatch(render.FeedbackBatch{SessionID: s.ID, Request: f.Label(), URL: f.URL, LeftOut: n.LeftOut}))
		return
	}
	if old := a.Superseded; old != nil && old.TS != "" {
		m.do(effUpdate{ts: old.TS, msg: m.batchMessage(old, "Superseded by the next message, which has it all.")})
	}
	b := a.New
	m.log("feedback on the request", "batch", b.Seq, "comments", len(b.Feedback), "checks", len(b.Failed), "left_out", b.LeftOut)
	if a.Auto {
		m.post(postFeedback, m.batchMessage(b, ""))
		m.startAddressing()
		return
	}
	m.post(postFeedback, render.RenderFeedbackBatch(m.batchView(b, busy)))
}

// batchMessage renders b; decided replaces its buttons when set.
func (m *move) batchMessage(b *follow.Batch, decided string) render.Message {
	return m.batchDecided(b, "", decided)
}

// batchDecided renders b with by's decision in place of its buttons.
func (m *move) batchDecided(b *follow.Batch, by, decided string) render.Message {
	v := m.batchView(b, false)
	v.Decided, v.DecidedBy = decided, by
	return render.RenderFeedbackBatch(v)
}

func (m *move) batchView(b *follow.Batch, busy bool) render.FeedbackBatch {
	f := m.s.Follow
	v := render.FeedbackBatch{SessionID: m.s.ID, Seq: b.Seq, Request: f.Label(), URL: f.URL, LeftOut: b.LeftOut, Busy: busy,
		Auto: b.Status == follow.Addressing && b.By == follow.AutoBy, AutoNext: f.Mode == gitrepo.FollowAuto, QueuedBy: b.QueuedBy}
	for _, fb := range b.Feedback {
		v.Comments = append(v.Comments, render.FeedbackLine{Kind: string(fb.Kind), Author: fb.Author, Path: fb.Path, Line: fb.Line, Body: fb.Body})
	}
	for _, c := range b.Failed {
		v.Checks = append(v.Checks, render.CheckLine{Name: c.Name, State: c.State, URL: c.URL, Log: c.Log})
	}
	return v
}

// Words of a press of Address feedback or Ignore: the batch message's once
// its run starts, the presser's otherwise.
const (
	noFeedbackWords     = "This session has no review feedback waiting, so nothing happened."
	staleFeedbackWords  = "This feedback was superseded by a newer message in this thread; use its buttons."
	addressingWords     = "asked h9 to address this; the run has started."
	alreadyQueued       = "This is already queued: h9 addresses it once the run ends."
	queuedWhileStopping = "The run is being stopped; press Address feedback once it has."
)

// feedbackAction handles Address feedback and Ignore (follow.Press):
// during a run a press is queued for its end, and the batch message
// names who pressed.
func (e evClick) feedbackAction(m *move) {
	s := m.s
	f := s.Follow
	switch f.Press(e.user, e.value.Revision, e.action == render.ActionIgnoreFeedback, s.State.inFlight(), s.StoppedBy != "") {
	case follow.NoBatch:
		m.postEphemeral(e.user, noFeedbackWords)
	case follow.Stale:
		m.postEphemeral(e.user, staleFeedbackWords)
	case follow.NotWaiting:
		m.postEphemeral(e.user, "This feedback is not waiting any more ("+string(f.Batch.Status)+"), so nothing happened.")
	case follow.Ignore:
		m.log("feedback ignored", "user", e.user, "batch", f.Batch.Seq)
		m.do(effUpdate{ts: f.Batch.TS, msg: m.batchDecided(f.Batch, e.user, "chose Ignore.")}, effSave{})
	case follow.AlreadyQueued:
		m.postEphemeral(e.user, alreadyQueued)
	case follow.WhileStopping:
		m.postEphemeral(e.user, queuedWhileStopping)
	case follow.Queue:
		m.log("feedback queued for the end of the run", "user", e.user, "batch", f.Batch.Seq)
		m.do(effUpdate{ts: f.Batch.TS, msg: m.batchMessage(f.Batch, "")}, effSave{})
	case follow.Address:
		m.log("addressing feedback", "user", e.user, "batch", f.Batch.Seq)
		m.address(e.user)
	}
}

// addressWaiting starts the batch that waited for the session's own run
// to end, now that it has and the session rests (follow.Waiting), and
// reports whether it did. A press it does not start is dropped when the
// move ends (dropQueued).
func (m *move) addressWaiting() bool {
	s := m.s
	resting := s.State == stateIdle || s.State == stateDone || s.State == stateStalled // nothing else waits for the user's word
	by := s.Follow.Waiting(resting, s.overBudget())
	if by == "" {
		return false
	}
	m.log("addressing feedback that came during the run", "batch", s.Follow.Batch.Seq, "by", by)
	m.address(by)
	return true
}

// address starts the addressing run of the batch on by's word (a user,
// or follow.AutoBy) and turns its message to say so.
func (m *move) address(by string) {
	f := m.s.Follow
	f.Address(by)
	b := f.Batch
	msg := m.batchMessage(b, "") // follow_up: auto's own words, with Stop
	if by != follow.AutoBy {
		msg = m.batchDecided(b, by, addressingWords)
	}
	if b.TS != "" {
		m.do(effUpdate{ts: b.TS, msg: msg})
	}
	m.startAddressing()
}

// dropQueued forgets a press of Address feedback queued for the end of a
// run once the session rests without having started it (follow.DropQueued):
// the batch shows its buttons again.
func (m *move) dropQueued() {
	b := m.s.Follow.Current()
	var by string
	if b != nil {
		by = b.QueuedBy
	}
	if m.s.Follow.DropQueued(m.s.State.inFlight()) == nil {
		return
	}
	m.log("queued feedback dropped: the run ended without starting it", "user", by, "batch", b.Seq)
	if b.Status == follow.Waiting && b.TS != "" {
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
	fb := &agent.Feedback{Request: s.Follow.Label()}
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
	switch s.Follow.AddressingEnded(e.planRun, s.StoppedBy != "", e.err != nil, e.text) {
	case follow.Stopped:
		b := s.Follow.Batch
		m.do(effUpdate{ts: b.TS, msg: m.batchMessage(b, "")})
		return false
	case follow.PushNext:
	default:
		return false
	}
	s.State = stateIdle
	if p := s.Progress; p.Total > 0 && p.Active == 0 {
		s.State = stateDone
	}
	if e.text != "" {
		m.postNotice(render.RenderAgentText(e.text))
	}
	m.do(effSave{}, effFollowPush{})
	return true
}

// evFeedbackPushed: the branch with the addressing run's work was pushed.
type evFeedbackPushed struct {
	head string
	err  error
}

func (e evFeedbackPushed) apply(m *move) {
	s := m.s
	switch s.Follow.FeedbackPushed(e.head, e.err) {
	case follow.NotPushing:
		return
	case follow.PushFailed:
		m.logError("pushing the addressed feedback failed", "err", e.err)
		m.postNotice(text(":x: h9 could not push `" + render.Escape(s.Repo.Branch) + "`, so it did not answer on " + s.Follow.Label() + ": " +
			render.Escape(render.Truncate(e.err.Error(), 1500))))
		m.do(effSave{})
		return
	case follow.Changed:
		m.postNotice(text(":arrow_up: Pushed `" + render.Escape(s.Repo.Branch) + "` (" + follow.ShortSHA(e.head) + "); answering on " + s.Follow.Label() + "."))
	}
	m.replyAttempt()
}

// replyAttempt records an attempt at the replies before it is made, so
// that a later attempt first looks for what this one sent.
func (m *move) replyAttempt() {
	m.s.Follow.Attempt()
	m.do(effSave{}, effForgeReply{})
}

// evRepliesSent: the replies with these keys are on the forge.
type evRepliesSent struct {
	keys []string
	err  error
}

func (e evRepliesSent) apply(m *move) {
	f := m.s.Follow
	switch f.RepliesSent(e.keys, e.err) {
	case follow.NotReplying:
		return
	case follow.Retry:
		m.do(effLog{level: slog.LevelWarn, msg: "answering on the request failed; trying again at the next poll", args: []any{"err", e.err}})
	case follow.Answered:
		n := len(f.Batch.Replies) - 1
		m.postNotice(text(":speech_balloon: Answered on " + f.Label() + ": " + render.Escape(follow.Plural(n, "reply", "replies")) + " and a summary comment."))
	}
	m.do(effSave{})
}

type (
	// effPollForge reads the request (→ evFollowPolled).
	effPollForge struct{}
	// effFollowPush commits what the addressing run left and pushes the
	// branch (→ evFeedbackPushed).
	effFollowPush struct{}
	// effForgeReply answers on the forge what is not yet answered
	// (→ evRepliesSent).
	effForgeReply struct{}
)

func (effPollForge) String() string  { return "poll the request" }
func (effFollowPush) String() string { return "push the addressed feedback" }
func (effForgeReply) String() string { return "answer on the forge" }

func (effPollForge) run(a *actor) {
	f, repo, every := *a.rec.Follow.Clone(), a.rec.Repo.Name, a.b.cfg.ForgePoll
	a.forgeOp(func(ctx context.Context) event {
		p := follow.Polled{Every: every}
		c, err := a.b.forgeClient(repo)
		if err == nil {
			p.Update, p.Cursor, err = follow.Read(ctx, c, f)
			a.b.follows.Counted(p.Update)
		}
		p.Err, p.Now = err, time.Now()
		return evFollowPolled{p}
	})
}

func (effFollowPush) run(a *actor) {
	s := a.rec.clone()
	if s.Repo == nil || a.b.cfg.Repos == nil {
		a.apply(evFeedbackPushed{err: errNoRepos})
		return
	}
	a.forgeOp(func(ctx context.Context) event {
		ctx, cancel := context.WithTimeout(ctx, pushTimeout)
		defer cancel()
		gs := s.Repo.git(s.ID)
		if _, err := a.b.cfg.Repos.Finish(ctx, gs, "Address review feedback on "+s.Follow.Label(), a.b.identity(ctx, a.log, s.Owner)); err != nil {
			a.log.Warn("the last checkpoint of the addressing run failed", "err", err)
		}
		pushed, err := a.b.cfg.Repos.Push(ctx, gs)
		return evFeedbackPushed{head: pushed.Commit, err: err}
	})
}

func (effForgeReply) run(a *actor) {
	f, repo := *a.rec.Follow.Clone(), a.rec.Repo.Name
	a.forgeOp(func(ctx context.Context) event {
		c, err := a.b.forgeClient(repo)
		if err != nil {
			return evRepliesSent{err: err}
		}
		keys, err := follow.SendReplies(ctx, c, f)
		return evRepliesSent{keys: keys, err: err}
	})
}

// forgeOp runs op off the actor like sideOp, one forge operation of the
// session at a time (a.forging).
func (a *actor) forgeOp(op func(ctx context.Context) event) {
	a.side++
	a.forging = true
	ctx := a.ctx
	if !a.b.tasks.spawn(func() { a.push(msgForgeDone{ev: op(ctx)}) }) {
		a.side--
		a.forging = false
	}
}

// msgForgeDone: a forge operation returned.
type msgForgeDone struct{ ev event }

func (m msgForgeDone) handle(a *actor) {
	a.side--
	a.forging = false
	if a.rec != nil && !a.lost {
		a.apply(m.ev)
	}
}

// msgFollowPoll: the poller says the session's request may be due.
type msgFollowPoll struct{}

func (msgFollowPoll) handle(a *actor) {
	if a.rec == nil || a.lost || a.forging || !a.rec.Follow.Following() {
		return
	}
	a.apply(evFollowDue{now: time.Now(), every: a.b.cfg.ForgePoll, followFor: a.b.cfg.ForgeFollowFor})
}

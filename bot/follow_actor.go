package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// The forge calls of following, made off the actor under the session's
// lease (like a push): one at a time per session, each with a deadline,
// and their outcome applied only while the lease holds. A forge that
// fails or hangs delays only its own request's following.

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
	f, repo, every := *a.rec.Follow.clone(), a.rec.Repo.Name, a.b.cfg.ForgePoll
	a.forgeOp(func(ctx context.Context) event {
		ev := evFollowPolled{now: time.Now(), every: every}
		c, err := a.b.forgeClient(repo)
		if err != nil {
			ev.err = err
			return ev
		}
		ctx, cancel := forgeCtx(ctx)
		defer cancel()
		ev.up, ev.cur, ev.err = c.Poll(ctx, f.Number, f.HeadSHA, f.Cursor)
		ev.now = time.Now()
		a.b.follows.counted(ev.up)
		return ev
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
		if _, err := a.b.cfg.Repos.Finish(ctx, gs, "Address review feedback on "+s.Follow.label(), a.b.identity(ctx, a.log, s.Owner)); err != nil {
			a.log.Warn("the last checkpoint of the addressing run failed", "err", err)
		}
		pushed, err := a.b.cfg.Repos.Push(ctx, gs)
		return evFeedbackPushed{head: pushed.Commit, err: err}
	})
}

func (effForgeReply) run(a *actor) {
	f, repo := *a.rec.Follow.clone(), a.rec.Repo.Name
	a.forgeOp(func(ctx context.Context) event {
		c, err := a.b.forgeClient(repo)
		if err != nil {
			return evRepliesSent{err: err}
		}
		return sendReplies(ctx, c, f)
	})
}

// sendReplies sends the batch's replies not yet sent. A later attempt
// (Tries > 1: an earlier one may have sent some and not lived to record
// it) first reads the request from before the first attempt and skips
// every reply whose marker it finds there.
func sendReplies(ctx context.Context, c forge.Client, f Follow) evRepliesSent {
	b := f.Batch
	var ev evRepliesSent
	if b.Tries > 1 {
		pctx, cancel := forgeCtx(ctx)
		up, _, err := c.Poll(pctx, f.Number, f.HeadSHA, b.Since)
		cancel()
		if err != nil {
			return evRepliesSent{err: fmt.Errorf("looking for the replies an earlier attempt sent: %w", err)}
		}
		for _, fb := range up.Feedback {
			if fb.Mine {
				b.markSent(fb.Body)
			}
		}
	}
	for _, r := range b.Replies {
		if r.Sent {
			ev.keys = append(ev.keys, r.Key)
			continue
		}
		rctx, cancel := forgeCtx(ctx)
		var err error
		if r.To != nil {
			err = c.Reply(rctx, f.Number, *r.To, r.Body)
		} else {
			err = c.Comment(rctx, f.Number, r.Body)
		}
		cancel()
		if err != nil {
			ev.err = err
			return ev
		}
		ev.keys = append(ev.keys, r.Key)
	}
	return ev
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
	if a.rec == nil || a.lost || a.forging || !a.rec.Follow.following() {
		return
	}
	a.apply(evFollowDue{now: time.Now(), every: a.b.cfg.ForgePoll, followFor: a.b.cfg.ForgeFollowFor})
}

package bot

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// outcomeTimeout bounds the last commit and the diff stat of a done session.
const outcomeTimeout = 5 * time.Minute

// repoOutcome makes a done session's outcome with a repository: what is
// left uncommitted becomes a last checkpoint (subject: the task), then
// the message gives the changes with Push branch and Open pull request,
// and the whole diff is uploaded into the thread (evOutcome). It runs on
// the actor, so the next run of the session starts after it; the record
// says the outcome is due before it starts, so a takeover makes it again.
func (a *actor) repoOutcome() {
	s, repos := a.rec, a.b.cfg.Repos
	if s.Outcome == nil {
		return
	}
	a.save()
	if !a.holding() {
		return
	}
	done := render.WithSpend(render.RenderDone(s.Outcome.Text, s.Progress), s.spend())
	if repos == nil {
		a.apply(evOutcome{msgs: []render.Message{done}})
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, outcomeTimeout)
	defer cancel()
	gs := s.Repo.git(s.ID)
	if _, err := repos.Finish(ctx, gs, automation.TaskOf(s.Task), a.b.identity(ctx, a.log, s.Owner)); err != nil {
		a.log.Warn("the last checkpoint failed", "err", err)
	}
	ch, err := repos.Changes(ctx, gs)
	if err != nil {
		a.log.Error("reading the session branch's changes", "err", err)
		a.apply(evOutcome{msgs: []render.Message{done,
			text("h9 could not read the changes of `" + render.Escape(s.Repo.Branch) + "`: " + render.Escape(render.Truncate(err.Error(), 300)))}})
		return
	}
	repo, _ := a.b.repo(s.Repo.Name)
	changes := renderChanges(s.Repo, ch, repos.CanOpenPullRequests(repo))
	changes.MergeRequest = repo.Forge != nil && repo.Forge.Type == "gitlab"
	outcome := render.RenderRepoDone(s.ID, s.Outcome.Text, s.Progress, changes)
	ev := evOutcome{msgs: []render.Message{render.WithSpend(outcome, s.spend())}}
	if len(ch.Files) > 0 {
		ev.diff = strings.ReplaceAll(gs.Branch, "/", "-") + ".diff"
	}
	a.apply(ev)
}

func renderChanges(r *SessionRepo, ch gitrepo.Changes, canPR bool) render.Changes {
	out := render.Changes{RepoLine: r.line(), Added: ch.Added, Deleted: ch.Deleted, CanOpenPR: canPR, PullRequest: r.PullRequest}
	for _, f := range ch.Files {
		out.Files = append(out.Files, render.FileLine{Path: f.Path, Added: f.Added, Deleted: f.Deleted, Binary: f.Binary})
	}
	return out
}

// maxDiffUpload bounds the diff file uploaded into a thread.
const maxDiffUpload = 32 << 20

// uploadDiff uploads the session branch's whole diff against its base as
// the pending post p's file, off the actor and under the session's lease.
func (a *actor) uploadDiff(p PendingPost) {
	if a.b.cfg.Repos == nil || a.rec.Repo == nil {
		a.apply(evPosted{key: p.Key})
		return
	}
	gs, comment := a.rec.Repo.git(a.rec.ID), render.DiffComment(a.rec.Repo.line())
	channel, thread, log := a.rec.Channel, a.rec.ThreadTS, a.log
	a.sideOp(func(ctx context.Context) event {
		ctx, cancel := context.WithTimeout(ctx, outcomeTimeout)
		defer cancel()
		var buf bytes.Buffer
		err := a.b.cfg.Repos.Diff(ctx, gs, &cappedBuffer{b: &buf, n: maxDiffUpload})
		switch {
		case errors.Is(err, errDiffTooLarge):
			buf.WriteString("\n[diff cut at 32 MiB]\n")
		case err != nil:
			log.Error("computing the diff", "err", err)
			return evPosted{key: p.Key}
		}
		if err := a.b.api.Upload(ctx, log, channel, thread, p.Text, comment, buf.Bytes()); err != nil {
			log.Error("uploading the diff", "err", err)
		}
		return evPosted{key: p.Key}
	})
}

// cappedBuffer takes at most n bytes, then fails the writer (git stops).
type cappedBuffer struct {
	b *bytes.Buffer
	n int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.b.Len()+len(p) > c.n {
		c.b.Write(p[:max(0, c.n-c.b.Len())])
		return 0, errDiffTooLarge
	}
	return c.b.Write(p)
}

// sideOp runs op off the actor (a push, an upload) with the session's
// lease in its context: the actor keeps the lease until it returns, and
// its event is applied only if the lease still holds then.
func (a *actor) sideOp(op func(ctx context.Context) event) {
	a.side++
	ctx := a.ctx
	a.b.tasks.spawn(func() { a.push(msgSideDone{ev: op(ctx)}) })
}

// msgSideDone: a side operation returned.
type msgSideDone struct{ ev event }

func (m msgSideDone) handle(a *actor) {
	a.side--
	if a.rec != nil && !a.lost {
		a.apply(m.ev)
	}
}

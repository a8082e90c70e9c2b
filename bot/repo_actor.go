package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// prepHandle is a checkout and setup in flight.
type prepHandle struct{ cancel context.CancelFunc }

// prepare makes the session's checkout and runs the repository's setup
// command on their own goroutine; msgPrepared reports back. Stop cancels it.
func (a *actor) prepare() {
	if a.prep != nil {
		return
	}
	ctx, cancel := context.WithCancel(a.b.runCtx)
	h := &prepHandle{cancel: cancel}
	a.prep = h
	a.refresh()
	id, repo := a.rec.ID, *a.rec.Repo
	go func() {
		ev := a.b.prepareRepo(ctx, id, repo)
		a.push(msgPrepared{prep: h, ev: ev})
	}()
}

// setupOutputLines is how much of a failed setup the thread shows.
const setupOutputLines = 25

// prepareRepo is the checkout, then the setup command (sandboxed, with
// network, without h9's secrets).
func (b *Bot) prepareRepo(ctx context.Context, id string, r SessionRepo) evPrepared {
	if b.cfg.Repos == nil {
		return evPrepared{err: errNoRepos}
	}
	gs := r.git(id)
	p, err := b.cfg.Repos.Prepare(ctx, gs)
	if err == nil {
		gs.Base = p.Base
		var res workspace.BashResult
		var ran bool
		res, ran, err = b.cfg.Repos.Setup(ctx, gs)
		if err == nil && ran && (res.ExitCode != 0 || res.TimedOut || res.Cancelled) && ctx.Err() == nil {
			return evPrepared{base: p.Base, setup: &setupFailure{what: setupWords(b, r.Name, res), output: lastLines(res.Output, setupOutputLines)}}
		}
	}
	switch {
	case ctx.Err() != nil && b.stopping.Load():
		return evPrepared{stopping: true}
	case ctx.Err() != nil:
		return evPrepared{err: fmt.Errorf("setting up was stopped: %w", ctx.Err())}
	case err != nil:
		return evPrepared{err: err}
	}
	return evPrepared{base: p.Base, warning: p.Warning}
}

func setupWords(b *Bot, name string, res workspace.BashResult) string {
	cmd := ""
	if repo, ok := b.repo(name); ok {
		cmd = "`" + strings.ReplaceAll(render.Truncate(repo.Setup, 200), "`", "'") + "` "
	}
	switch {
	case res.TimedOut:
		return fmt.Sprintf("the setup command %sof %s timed out after %s", cmd, name, res.Timeout)
	case res.Cancelled:
		return fmt.Sprintf("the setup command %sof %s was cancelled", cmd, name)
	}
	return fmt.Sprintf("the setup command %sof %s exited with code %d", cmd, name, res.ExitCode)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// msgPrepared: the checkout and setup ended.
type msgPrepared struct {
	prep *prepHandle
	ev   evPrepared
}

func (m msgPrepared) handle(a *actor) {
	if a.rec == nil || a.prep != m.prep {
		return
	}
	a.prep = nil
	m.prep.cancel()
	a.apply(m.ev)
}

// outcomeTimeout bounds the last commit and the diff stat of a done session.
const outcomeTimeout = 5 * time.Minute

// repoOutcome is a done session's outcome with a repository: what is left
// uncommitted becomes a last checkpoint (subject: the task), then the
// message gives the changes with Push branch and Open pull request, and
// the whole diff is uploaded into the thread. It runs on the actor, so the
// next run of the session starts after it.
func (a *actor) repoOutcome(finalText string) {
	s, repos := a.rec, a.b.cfg.Repos
	if repos == nil {
		a.say(render.WithSpend(render.RenderDone(finalText, s.Progress), s.spend()))
		return
	}
	ctx, cancel := context.WithTimeout(a.b.bg, outcomeTimeout)
	defer cancel()
	gs := s.Repo.git(s.ID)
	if _, err := repos.Finish(ctx, gs, s.Task, a.b.identity(ctx, a.log, s.Owner)); err != nil {
		a.log.Warn("the last checkpoint failed", "err", err)
	}
	ch, err := repos.Changes(ctx, gs)
	if err != nil {
		a.log.Error("reading the session branch's changes", "err", err)
		a.say(render.WithSpend(render.RenderDone(finalText, s.Progress), s.spend()))
		a.say(text("h9 could not read the changes of `" + render.Escape(s.Repo.Branch) + "`: " + render.Escape(render.Truncate(err.Error(), 300))))
		return
	}
	repo, _ := a.b.repo(s.Repo.Name)
	outcome := render.RenderRepoDone(s.ID, finalText, s.Progress, renderChanges(s.Repo, ch, a.b.cfg.Repos.CanOpenPullRequests(repo)))
	a.say(render.WithSpend(outcome, s.spend()))
	if len(ch.Files) > 0 {
		go a.uploadDiff(gs, s.Channel, s.ThreadTS)
	}
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
// <branch with / replaced by ->.diff.
func (a *actor) uploadDiff(gs gitrepo.Session, channel, thread string) {
	ctx, cancel := context.WithTimeout(a.b.bg, outcomeTimeout)
	defer cancel()
	var buf bytes.Buffer
	err := a.b.cfg.Repos.Diff(ctx, gs, &cappedBuffer{b: &buf, n: maxDiffUpload})
	if err != nil && !errors.Is(err, errDiffTooLarge) {
		a.log.Error("computing the diff", "err", err)
		return
	}
	if errors.Is(err, errDiffTooLarge) {
		buf.WriteString("\n[diff cut at 32 MiB]\n")
	}
	name := strings.ReplaceAll(gs.Branch, "/", "-") + ".diff"
	if err := a.b.api.upload(ctx, a.log, channel, thread, name, buf.Bytes()); err != nil {
		a.log.Error("uploading the diff", "err", err)
	}
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

// checkpointer is the session's checkpoint for a run in execution mode
// (agent.RunOptions.Checkpoint): a commit of the workspace's changes on
// its branch, the todo as subject, the owner as co-author; its short id
// and +/− become the todo's evidence.
func (b *Bot) checkpointer(log *slog.Logger, repo SessionRepo, id, owner string) agent.Checkpointer {
	return func(ctx context.Context, ws *workspace.Workspace, todo planning.TodoItem) (*planning.Checkpoint, error) {
		c, err := b.cfg.Repos.Checkpoint(ctx, ws, repo.git(id), todo.Content, b.identity(ctx, log, owner))
		if err != nil || c == nil {
			return nil, err
		}
		return &planning.Checkpoint{Commit: c.Short, Added: c.Added, Deleted: c.Deleted}, nil
	}
}

// pushTimeout bounds a push and the pull request's API calls.
const pushTimeout = 5 * time.Minute

// pushBranch pushes the session branch (and opens or finds its pull
// request) off the actor, and says how it went in the thread. It reads the
// session's repository only, so a run may go on meanwhile.
func (a *actor) pushBranch(e effPush) {
	s := *a.rec
	r := *s.Repo
	go func() {
		ctx, cancel := context.WithTimeout(a.b.bg, pushTimeout)
		defer cancel()
		msg := a.b.pushAndOpen(ctx, a, s, r, e.pullRequest)
		a.b.api.post(a.b.bg, a.log, s.Channel, s.ThreadTS, msg)
	}()
}

// pushAndOpen is the push, then the pull request when asked: the words
// for the thread either way.
func (b *Bot) pushAndOpen(ctx context.Context, a *actor, s Session, r SessionRepo, pullRequest bool) render.Message {
	if b.cfg.Repos == nil {
		return text(":x: " + errNoRepos.Error() + ".")
	}
	gs := r.git(s.ID)
	branch := "`" + render.Escape(r.Branch) + "`"
	if _, err := b.cfg.Repos.Push(ctx, gs); err != nil {
		a.log.Warn("push failed", "err", err)
		why := render.Escape(render.Truncate(err.Error(), 1500))
		if errors.Is(err, gitrepo.ErrRejected) {
			return text(":x: " + r.Name + " rejected the push of " + branch + ":\n```" + why + "```")
		}
		return text(":x: h9 could not push " + branch + " to " + r.Name + ": " + why)
	}
	if !pullRequest {
		words := ":arrow_up: Pushed " + branch + " to " + render.Escape(r.Name) + "."
		if r.PullRequest != "" {
			words += " Its pull request has it now: " + render.Escape(r.PullRequest)
		}
		return text(words)
	}
	pr, err := b.cfg.Repos.OpenPullRequest(ctx, gs, pullRequestTitle(s.Task), b.pullRequestBody(ctx, a, s))
	if err != nil {
		a.log.Warn("opening the pull request failed", "err", err)
		return text(":x: Pushed " + branch + ", but the pull request could not be opened: " + render.Escape(render.Truncate(err.Error(), 1500)))
	}
	// Through the registry: the actor may have retired meanwhile.
	b.reg.deliver(a.key, msgPullRequest{url: pr.URL})
	if pr.Reused {
		return text(":link: The pull request of " + branch + " is already open, now up to date: " + render.Escape(pr.URL))
	}
	return text(":tada: Opened the pull request of " + branch + ": " + render.Escape(pr.URL))
}

// pullRequestTitle is the task on one line, as GitHub shows titles.
func pullRequestTitle(task string) string {
	t := strings.Join(strings.Fields(task), " ")
	if r := []rune(t); len(r) > 250 {
		t = string(r[:249]) + "…"
	}
	if t == "" {
		t = "h9 session"
	}
	return t
}

// pullRequestBody is the checklist as a markdown task list and the
// thread's permalink.
func (b *Bot) pullRequestBody(ctx context.Context, a *actor, s Session) string {
	var sb strings.Builder
	snap, err := b.cfg.Agent.Snapshot(ctx, s.ID)
	if err != nil {
		a.log.Warn("reading the todos for the pull request", "err", err)
	}
	for _, t := range snap.Todos {
		mark := " "
		if t.Status == planning.TodoCompleted {
			mark = "x"
		}
		line := strings.Join(strings.Fields(t.Content), " ")
		if t.Status == planning.TodoCancelled {
			line = "~~" + line + "~~"
		}
		sb.WriteString("- [" + mark + "] " + line + "\n")
	}
	if sb.Len() > 0 {
		sb.WriteString("\n")
	}
	sb.WriteString("Slack thread: " + b.api.permalink(ctx, a.log, s.Channel, s.ThreadTS) + "\n")
	return sb.String()
}

// msgPullRequest: a pull request of the session branch is open.
type msgPullRequest struct{ url string }

func (m msgPullRequest) handle(a *actor) {
	if a.rec != nil {
		a.apply(evPullRequest(m))
	}
}

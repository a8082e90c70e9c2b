package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/forge"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/textcut"
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
	a.b.tasks.spawn(func() {
		ev := a.b.prepareRepo(ctx, id, repo)
		a.push(msgPrepared{prep: h, ev: ev})
	})
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
		b.repoFetched(r.Name)
		gs.Base = p.Base
		var res workspace.BashResult
		var ran bool
		if !p.SetUp { // a spare made set up needs no second run
			res, ran, err = b.cfg.Repos.Setup(ctx, gs)
		}
		if err == nil && ran && (res.ExitCode != 0 || res.TimedOut || res.Cancelled) && ctx.Err() == nil {
			return evPrepared{base: p.Base, setup: &setupFailure{what: setupWords(b, r.Name, res), output: textcut.LastLines(res.Output, setupOutputLines)}}
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
// request) off the actor, under the session's lease, and says how it went
// in the thread (evPushed) unless the lease was lost meanwhile. It reads
// the session's repository only, so a run may go on meanwhile.
func (a *actor) pushBranch(e effPush) {
	s := *a.rec
	r := *s.Repo
	a.sideOp(func(ctx context.Context) event {
		ctx, cancel := context.WithTimeout(ctx, pushTimeout)
		defer cancel()
		msg, pr, head := a.b.pushAndOpen(ctx, a.log, s, r, e.pullRequest)
		ev := evPushed{msg: msg, url: pr.URL, head: head}
		if s.Follow == nil || s.Follow.Number != pr.Number {
			ev.follow = a.b.startFollowing(r.Name, pr.Number, pr.URL, time.Now())
		}
		return ev
	})
}

// pushAndOpen is the push, then the pull request when asked: the words
// for the thread either way, the pull request when it is open and the
// commit pushed ("" when the push failed).
func (b *Bot) pushAndOpen(ctx context.Context, log *slog.Logger, s Session, r SessionRepo, pullRequest bool) (render.Message, gitrepo.PullRequest, string) {
	var none gitrepo.PullRequest
	if b.cfg.Repos == nil {
		return text(":x: " + errNoRepos.Error() + "."), none, ""
	}
	gs := r.git(s.ID)
	branch := "`" + render.Escape(r.Branch) + "`"
	pushed, err := b.cfg.Repos.Push(ctx, gs)
	if err != nil {
		log.Warn("push failed", "err", err)
		why := render.Escape(render.Truncate(err.Error(), 1500))
		if errors.Is(err, gitrepo.ErrRejected) {
			return text(":x: " + r.Name + " rejected the push of " + branch + ":\n```" + why + "```"), none, ""
		}
		return text(":x: h9 could not push " + branch + " to " + r.Name + ": " + why), none, ""
	}
	if !pullRequest {
		words := ":arrow_up: Pushed " + branch + " to " + render.Escape(r.Name) + "."
		if r.PullRequest != "" {
			words += " Its " + b.requestWord(r.Name) + " has it now: " + render.Escape(r.PullRequest)
		}
		return text(words), none, pushed.Commit
	}
	word := b.requestWord(r.Name) // "pull request" or GitLab's "merge request"
	pr, err := b.cfg.Repos.OpenPullRequest(ctx, gs, pullRequestTitle(automation.TaskOf(s.Task)), b.pullRequestBody(ctx, log, s))
	if err != nil {
		log.Warn("opening the request failed", "err", err)
		return text(":x: Pushed " + branch + ", but the " + word + " could not be opened: " + render.Escape(render.Truncate(err.Error(), 1500))), none, pushed.Commit
	}
	if pr.Reused {
		return text(":link: The " + word + " of " + branch + " is already open, now up to date: " + render.Escape(pr.URL)), pr, pushed.Commit
	}
	return text(":tada: Opened the " + word + " of " + branch + ": " + render.Escape(pr.URL)), pr, pushed.Commit
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
func (b *Bot) pullRequestBody(ctx context.Context, log *slog.Logger, s Session) string {
	var sb strings.Builder
	snap, err := b.cfg.Agent.Snapshot(ctx, s.ID)
	if err != nil {
		log.Warn("reading the todos for the pull request", "err", err)
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
	sb.WriteString("Slack thread: " + b.api.Permalink(ctx, log, s.Channel, s.ThreadTS) + "\n")
	if s.Repo != nil {
		return withCloses(sb.String(), s.Repo.Closes)
	}
	return sb.String()
}

// withCloses ends a request's body with `Closes #n` when an issue
// trigger started its session (n > 0) and the body does not say it yet:
// the forge closes the issue when the request is merged.
func withCloses(body string, n int) string {
	if n <= 0 {
		return body
	}
	line := "Closes #" + strconv.Itoa(n)
	if closesRef(line).MatchString(body) {
		return body
	}
	return strings.TrimRight(body, "\n") + "\n\n" + line + "\n"
}

// closesRef matches line as a whole reference (#12 is not #123).
func closesRef(line string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)(^|\s)` + regexp.QuoteMeta(line) + `\b`)
}

// requestWord is what the repository's forge calls a request: "merge
// request" on GitLab, "pull request" elsewhere.
func (b *Bot) requestWord(repo string) string {
	if b.cfg.Repos == nil {
		return "pull request"
	}
	r, ok := b.cfg.Repos.Get(repo)
	if !ok || r.Forge == nil {
		return "pull request"
	}
	return forge.Kind(r.Forge.Type).RequestWord()
}

package bot

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
)

// Repos is what the bot uses of *gitrepo.Repos: the configured
// repositories, and each session's checkout, commits, diff and push.
type Repos interface {
	List() []gitrepo.Repo
	Get(name string) (gitrepo.Repo, bool)
	ForChannel(channel string) (gitrepo.Repo, bool)
	CanOpenPullRequests(repo gitrepo.Repo) bool

	Prepare(ctx context.Context, s gitrepo.Session) (gitrepo.Prepared, error)
	Setup(ctx context.Context, s gitrepo.Session) (workspace.BashResult, bool, error)
	Checkpoint(ctx context.Context, ws *workspace.Workspace, s gitrepo.Session, subject string, coauthor *gitrepo.Identity) (*gitrepo.Commit, error)
	Finish(ctx context.Context, s gitrepo.Session, subject string, coauthor *gitrepo.Identity) (*gitrepo.Commit, error)
	Changes(ctx context.Context, s gitrepo.Session) (gitrepo.Changes, error)
	Diff(ctx context.Context, s gitrepo.Session, w io.Writer) error
	Push(ctx context.Context, s gitrepo.Session) (gitrepo.Pushed, error)
	OpenPullRequest(ctx context.Context, s gitrepo.Session, title, body string) (gitrepo.PullRequest, error)
}

// SessionRepo is a session's repository, recorded with the session.
type SessionRepo struct {
	Name   string `json:"name"`
	Branch string `json:"branch"`         // the session branch, h9/…
	Base   string `json:"base,omitempty"` // the base branch ("" until the default is known)
	// Ready: the checkout is made and the setup command succeeded; the
	// session's runs may start.
	Ready       bool   `json:"ready,omitempty"`
	PullRequest string `json:"pull_request,omitempty"` // its URL, once opened
	// Closes is the issue an automation's issue trigger started the
	// session for: its request says `Closes #N` (ARCHITECTURE.md,
	// "Automations"); 0 for none.
	Closes int `json:"closes,omitempty"`
}

// git is the session as gitrepo names it.
func (r *SessionRepo) git(sessionID string) gitrepo.Session {
	return gitrepo.Session{ID: sessionID, Repo: r.Name, Branch: r.Branch, Base: r.Base}
}

func (r *SessionRepo) line() render.RepoLine {
	return render.RepoLine{Repo: r.Name, Branch: r.Branch, Base: r.Base}
}

// repoSetting is the channel setting /h9 repo keeps.
const repoSetting = "repo"

// hasRepos reports whether any repository is configured.
func (b *Bot) hasRepos() bool { return b.cfg.Repos != nil && len(b.cfg.Repos.List()) > 0 }

// repoNames lists the configured names for a refusal: `a`, `b` and `none`.
func (b *Bot) repoNames() string {
	if !b.hasRepos() {
		return "none: h9 has no repositories configured (H9_REPOS, H9_REPOS_FILE)"
	}
	var names []string
	for _, r := range b.cfg.Repos.List() {
		names = append(names, r.Name)
	}
	return quoteList(append(names, gitrepo.NoRepo))
}

// checkOptions refuses, without I/O, options that cannot start a session:
// an unknown repository or an invalid branch name.
func (b *Bot) checkOptions(o taskOptions) error {
	if o.repo != "" && !strings.EqualFold(o.repo, gitrepo.NoRepo) {
		if _, ok := b.repo(o.repo); !ok {
			return fmt.Errorf("there is no repository `%s`; the repositories are %s", render.Escape(o.repo), b.repoNames())
		}
	}
	if o.branch != "" && !gitrepo.ValidBranch(o.branch) {
		return fmt.Errorf("`%s` is not a branch name", render.Escape(o.branch))
	}
	return nil
}

func (b *Bot) repo(name string) (gitrepo.Repo, bool) {
	if b.cfg.Repos == nil {
		return gitrepo.Repo{}, false
	}
	return b.cfg.Repos.Get(name)
}

// chooseRepo is the precedence of ARCHITECTURE.md ("Repository precedence"): the task's repo= > the
// channel's /h9 repo (a name, or none) > the repository whose channels list
// the channel > the only configured one > none. setting is the channel's.
// It returns nil for no repository, or the new session's repository on a
// fresh h9/… branch named after the task.
func (b *Bot) chooseRepo(o taskOptions, setting, channel, task string) (*SessionRepo, error) {
	repo, err := b.pickRepo(o, setting, channel)
	switch {
	case err != nil:
		return nil, err
	case repo.Name == "" && o.branch != "":
		return nil, fmt.Errorf("`branch=` needs a repository, and this session has none; add `repo=` (one of %s)", b.repoNames())
	case repo.Name == "":
		return nil, nil
	}
	return &SessionRepo{Name: repo.Name, Branch: gitrepo.NewBranch(task), Base: firstOf(o.branch, repo.Branch)}, nil
}

func (b *Bot) pickRepo(o taskOptions, setting, channel string) (gitrepo.Repo, error) {
	switch {
	case strings.EqualFold(o.repo, gitrepo.NoRepo):
		return gitrepo.Repo{}, nil
	case o.repo != "":
		if r, ok := b.repo(o.repo); ok {
			return r, nil
		}
		return gitrepo.Repo{}, fmt.Errorf("there is no repository `%s`; the repositories are %s", render.Escape(o.repo), b.repoNames())
	case strings.EqualFold(setting, gitrepo.NoRepo):
		return gitrepo.Repo{}, nil
	case setting != "":
		if r, ok := b.repo(setting); ok {
			return r, nil
		}
		return gitrepo.Repo{}, fmt.Errorf("this channel's repository `%s` (set with `/h9 repo`) is not configured any more; "+
			"choose one with `/h9 repo <name>` (%s) or add `repo=` to the task", render.Escape(setting), b.repoNames())
	}
	if !b.hasRepos() {
		return gitrepo.Repo{}, nil
	}
	if r, ok := b.cfg.Repos.ForChannel(channel); ok {
		return r, nil
	}
	if all := b.cfg.Repos.List(); len(all) == 1 {
		return all[0], nil
	}
	return gitrepo.Repo{}, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// createFromMention starts "@h9 [options] <task>": the options block and
// the channel's repository decide the session's repository; a refusal
// (an unknown repository, an invalid branch) starts nothing.
func (a *actor) createFromMention(m msgMention) {
	opts, task, err := splitOptions(m.text)
	if err == nil && task == "" {
		err = fmt.Errorf("there is no task after the options")
	}
	var repo *SessionRepo
	if err == nil {
		repo, err = a.b.resolveRepo(opts, a.key.channel, task)
	}
	if err != nil {
		a.b.api.PostEphemeral(a.b.bg, a.log, a.key.channel, m.user, a.key.ts, text("h9 did not start a session: "+err.Error()+"."))
		return
	}
	files, refused := a.b.attachments(m.ts, m.files)
	a.create(m.team, m.user, task, planning.PlanModePlan, repo, files)
	a.postRefused(refused)
}

// resolveRepo checks the options and applies the precedence with the
// channel's setting.
func (b *Bot) resolveRepo(opts taskOptions, channel, task string) (*SessionRepo, error) {
	if err := b.checkOptions(opts); err != nil {
		return nil, err
	}
	setting, err := b.store.ChannelSetting(b.bg, channel, repoSetting)
	if err != nil {
		return nil, fmt.Errorf("h9 could not read this channel's repository just now; try again in a moment")
	}
	return b.chooseRepo(opts, setting, channel, task)
}

package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Session names one session's work in a repository.
type Session struct {
	ID     string // the agent's session id: its workspace is the checkout
	Repo   string // a configured repository's name
	Branch string // the session branch, h9/…
	Base   string // the base branch; "" = the remote's default (Prepare resolves it)
}

// Prepared is a session's checkout as Prepare left it.
type Prepared struct {
	Base       string // the base branch
	BaseCommit string // where the session branch started
	Warning    string // something the user should know (the cache was used without a fetch)
	Copied     int64  // bytes of objects copied where they could not be linked
	Spare      bool   // the checkout was made ahead (spare.go)
	SetUp      bool   // and the repository's setup already ran in it, at BaseCommit (spare_setup.go)
}

// Prepare makes the session's checkout on its branch from the base, once:
// the cache is fetched (or created), then the workspace is made from it,
// borrowing its packs, so only the working tree costs disk. The session's
// own repository in the cache, where its commits are fetched and from
// which it is pushed, is made first. Prepare again after a success, a
// failure or a crash picks up where it stopped.
func (r *Repos) Prepare(ctx context.Context, s Session) (Prepared, error) {
	repo, err := r.checkSession(s)
	if err != nil {
		return Prepared{}, err
	}
	own, err := r.sessionDir(repo, s.ID)
	if err != nil {
		return Prepared{}, err
	}
	if err := r.useCache(repo, s.ID); err != nil {
		return Prepared{}, fmt.Errorf("%w: the cache of %s: %w", ErrWorkspace, repo.Name, err)
	}
	if done, err := r.cfg.Workspaces.Exists(s.ID); err != nil {
		return Prepared{}, fmt.Errorf("%w: %w", ErrWorkspace, err)
	} else if done && exists(filepath.Join(own, "HEAD")) {
		return r.prepared(ctx, own)
	}
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		return Prepared{}, err
	}
	waited := time.Now()
	unlock, err := r.locks.lock(ctx, filepath.Join(r.repoDir(repo), "lock"))
	if err != nil {
		return Prepared{}, err
	}
	var once sync.Once
	release := func() { once.Do(unlock) }
	defer release()
	p := Prepared{}
	if p.Warning, err = r.syncMirror(ctx, repo, waited); err != nil {
		return Prepared{}, err
	}
	refs, err := r.mirrorRefs(ctx, repo)
	if err != nil {
		return Prepared{}, err
	}
	if p.Base, p.BaseCommit, err = r.startingPoint(ctx, repo, s, own, refs); err != nil {
		return Prepared{}, err
	}
	_, err = r.cfg.Workspaces.Create(s.ID, func(dir string) error {
		return r.fillCheckout(ctx, repo, dir, s.Branch, &p, refs, release)
	})
	if err != nil {
		return Prepared{}, fmt.Errorf("%w: creating the checkout of %s: %w", ErrWorkspace, repo.Name, err)
	}
	if s.Base == "" || s.Base == repo.Branch {
		r.refill(repo, p.Base) // the usual base; a spare for a rare one would only hold disk
	}
	return p, nil
}

// fillCheckout makes dir the session's checkout: the spare when there is
// one, moved to the base commit, else a new one. release gives up the
// cache's lock once the packs are linked.
func (r *Repos) fillCheckout(ctx context.Context, repo Repo, dir, branch string, p *Prepared, refs []ref, release func()) error {
	from, err := r.takeSpare(repo, p.Base, dir, branch, p.BaseCommit, refs)
	if err == nil && from == "" {
		p.Copied, err = r.initCheckout(ctx, repo, dir, branch, p.BaseCommit, refs)
	}
	release() // the packs are linked: other sessions may fetch now
	switch {
	case err != nil:
		return err
	case from != "":
		p.Spare, p.SetUp = true, takenSetUp(dir, from, p.BaseCommit)
		return r.moveTree(ctx, dir, from, p.BaseCommit)
	}
	return r.finishCheckout(ctx, dir)
}

func (r *Repos) checkSession(s Session) (Repo, error) {
	repo, err := r.repo(s.Repo)
	switch {
	case err != nil:
		return Repo{}, err
	case r.cfg.Workspaces == nil:
		return Repo{}, fmt.Errorf("%w: no workspaces to make checkouts in", ErrInvalidConfig)
	case !strings.HasPrefix(s.Branch, BranchPrefix) || !ValidBranch(s.Branch):
		return Repo{}, fmt.Errorf("%w: %q is not a session branch", ErrInvalidConfig, s.Branch)
	case s.Base != "" && !ValidBranch(s.Base):
		return Repo{}, fmt.Errorf("%w: %q is not a branch name", ErrNoBranch, s.Base)
	}
	return repo, nil
}

// startingPoint resolves the base branch and commit, and makes the
// session's repository on the first attempt; a later attempt keeps the
// base the first one chose. The cache's lock is held.
func (r *Repos) startingPoint(ctx context.Context, repo Repo, s Session, own string, refs []ref) (base, commit string, err error) {
	if exists(filepath.Join(own, "HEAD")) {
		p, err := r.prepared(ctx, own)
		return p.Base, p.BaseCommit, err
	}
	base = s.Base
	if base == "" {
		if base, err = r.defaultBranch(ctx, repo, refs); err != nil {
			return "", "", err
		}
	}
	commit, ok := findRef(refs, "refs/heads/"+base)
	if !ok {
		return "", "", fmt.Errorf("%w: %s has no branch %q (it has %s)", ErrNoBranch, repo.Name, base, strings.Join(branchNames(refs, 10), ", "))
	}
	if _, taken := findRef(refs, "refs/heads/"+s.Branch); taken {
		return "", "", fmt.Errorf("%w: %s already has a branch %s", ErrBranchTaken, repo.Name, s.Branch)
	}
	return base, commit, r.createSessionRepo(ctx, own, s.Branch, base, commit)
}

// createSessionRepo makes the session's repository in the cache: bare,
// borrowing the cache's objects (alternates, relative, so the data
// directory may move), its branch at the base commit.
func (r *Repos) createSessionRepo(ctx context.Context, own, branch, base, commit string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(own), ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	config := [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}, {"h9.base", base}, {"h9.branch", branch}}
	if err := initBare(ctx, tmp, config); err != nil {
		return err
	}
	alt := filepath.Join("..", "..", "..", "mirror.git", "objects") + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(alt), 0o600); err != nil {
		return err
	}
	if err := writePackedRefs(tmp, []ref{{"refs/heads/" + branch, commit}, {baseRef, commit}}); err != nil {
		return err
	}
	return os.Rename(tmp, own)
}

// baseRef keeps the commit a session branch started from.
const baseRef = "refs/h9/base"

// prepared reads back what Prepare recorded in the session's repository.
func (r *Repos) prepared(ctx context.Context, own string) (Prepared, error) {
	base, err := gitRun{dir: own, args: []string{"config", "h9.base"}}.text(ctx)
	if err != nil {
		return Prepared{}, fmt.Errorf("%w: reading the session's repository: %w", ErrWorkspace, err)
	}
	commit, err := revParse(ctx, own, baseRef)
	if err != nil {
		return Prepared{}, fmt.Errorf("%w: the session's repository has no base commit", ErrWorkspace)
	}
	return Prepared{Base: base, BaseCommit: commit}, nil
}

// sessionDir is the session's own repository in repo's cache.
func (r *Repos) sessionDir(repo Repo, id string) (string, error) {
	ws, err := r.cfg.Workspaces.Path(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.repoDir(repo), "sessions", filepath.Base(ws)+".git"), nil
}

// sessionRepo finds a prepared session's repository and takes its lock.
func (r *Repos) sessionRepo(ctx context.Context, s Session) (repo Repo, own string, unlock func(), err error) {
	if repo, err = r.checkSession(s); err != nil {
		return Repo{}, "", nil, err
	}
	if own, err = r.sessionDir(repo, s.ID); err != nil {
		return Repo{}, "", nil, err
	}
	if !exists(filepath.Join(own, "HEAD")) {
		return Repo{}, "", nil, fmt.Errorf("%w: session %s has no checkout of %s", ErrWorkspace, s.ID, repo.Name)
	}
	unlock, err = r.locks.lock(ctx, strings.TrimSuffix(own, ".git")+".lock")
	return repo, own, unlock, err
}

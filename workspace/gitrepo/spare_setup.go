package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
)

// A spare is made set up: the repository's setup command runs in it as it
// would at a session's start (sandboxed, with network, the repository's
// cache, no secret), so a session that takes it starts without waiting
// for npm ci or go mod download. When the base moved between the spare's
// making and its taking, the session runs the setup again on the new
// tree (a lock file may have changed; the cache keeps that run short).
// A setup that fails leaves the spare not set up: the session runs it
// and reports the failure as usual. Setup results must not depend on the
// directory's path: the spare is renamed into the session's workspace.

// spareSetupMark, in a spare's .git, is the commit its setup succeeded at.
const spareSetupMark = "h9-spare-setup"

// setUpSpare runs repo's setup in dir, a spare being made at commit.
func (r *Repos) setUpSpare(ctx context.Context, repo Repo, dir, commit string) error {
	mark := filepath.Join(dir, ".git", spareSetupMark)
	if repo.Setup == "" {
		return nil
	}
	cache, err := r.cacheDir(repo)
	if err != nil {
		return err
	}
	ws, done, err := r.cfg.Workspaces.OpenSpare(dir, cache)
	if err != nil {
		return err
	}
	defer done()
	res, err := ws.Bash(ctx, repo.Setup, workspace.BashOptions{Network: true, Timeout: workspace.MaxBashTimeout})
	if err != nil || res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		os.Remove(mark) // whatever the command itself left there
		return err
	}
	return os.WriteFile(mark, []byte(commit+"\n"), 0o644)
}

// takenSetUp reports whether a taken spare's setup ran at the commit the
// session starts from, and removes the mark.
func takenSetUp(dir, from, to string) bool {
	mark := filepath.Join(dir, ".git", spareSetupMark)
	at, err := os.ReadFile(mark)
	os.Remove(mark)
	return err == nil && strings.TrimSpace(string(at)) == from && from == to
}

// cacheDir is the repository's cache of build and package downloads,
// shared by its sessions only and kept across them (workspace/cache.go).
// It sits beside the repository's mirror, under H9_DATA_DIR, which every
// command is otherwise denied.
func (r *Repos) cacheDir(repo Repo) (string, error) {
	return filepath.Abs(filepath.Join(r.repoDir(repo), "cache"))
}

// useCache gives session id the repository's cache.
func (r *Repos) useCache(repo Repo, id string) error {
	dir, err := r.cacheDir(repo)
	if err != nil {
		return err
	}
	return r.cfg.Workspaces.UseCache(id, dir)
}

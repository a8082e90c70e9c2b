package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files of a repository's default branch that h9 itself reads (a
// repository's .h9/automations.yaml, ARCHITECTURE.md, "Automations"): read
// from the cache with git, never checked out and never run, so no sandbox
// is needed.

// fileReadTimeout bounds reading one file from the cache.
const fileReadTimeout = 30 * time.Second

// MaxBranchFile is the largest file ReadDefaultBranchFile returns.
const MaxBranchFile = 1 << 20

// ErrTooLarge: the file is larger than MaxBranchFile.
var ErrTooLarge = errors.New("file too large")

// Fetch brings the repository's cache up to date, under its lock, as a
// session's start does (it creates the cache on first use), and learns
// the remote's default branch.
func (r *Repos) Fetch(ctx context.Context, name string) (warning string, err error) {
	repo, err := r.repo(name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(r.repoDir(repo), 0o700); err != nil {
		return "", err
	}
	waited := time.Now()
	unlock, err := r.locks.lock(ctx, filepath.Join(r.repoDir(repo), "lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if warning, err = r.syncMirror(ctx, repo, waited); err != nil || repo.Branch != "" {
		return warning, err
	}
	// Learn the default branch now (it is remembered in the cache), so
	// ReadDefaultBranchFile can read it without the network.
	refs, err := r.mirrorRefs(ctx, repo)
	if err == nil {
		_, err = r.defaultBranch(ctx, repo, refs)
	}
	return warning, err
}

// ReadDefaultBranchFile reads file (a path in the repository) on the
// repository's default branch as the cache has it: found is false when
// the branch has no such file. A repository whose cache does not exist
// yet, or whose default branch is unknown, is an error: nothing can be
// said about its files.
func (r *Repos) ReadDefaultBranchFile(ctx context.Context, name, file string) (data []byte, found bool, err error) {
	repo, err := r.repo(name)
	if err != nil {
		return nil, false, err
	}
	clean := path.Clean(strings.TrimPrefix(file, "/"))
	if clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
		return nil, false, fmt.Errorf("%w: %q is not a path in a repository", ErrInvalidConfig, file)
	}
	dir := r.mirrorDir(repo)
	if !exists(filepath.Join(dir, "HEAD")) {
		return nil, false, fmt.Errorf("%w: %s has not been fetched yet", ErrGit, repo.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, fileReadTimeout)
	defer cancel()
	branch := repo.Branch
	if branch == "" {
		branch = symbolicHead(dir)
	}
	if branch == "" || !hasRefs(ctx, dir) {
		return nil, false, fmt.Errorf("%w: the default branch of %s is not known yet", ErrNoBranch, repo.Name)
	}
	if _, err := revParse(ctx, dir, "refs/heads/"+branch); err != nil {
		return nil, false, fmt.Errorf("%w: %s has no branch %s", ErrNoBranch, repo.Name, branch)
	}
	object := "refs/heads/" + branch + ":" + clean
	kind, err := gitRun{dir: dir, args: []string{"cat-file", "-t", object}}.text(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, err
		}
		return nil, false, nil // no such path on the branch
	}
	if kind != "blob" {
		return nil, false, nil
	}
	size, err := gitRun{dir: dir, args: []string{"cat-file", "-s", object}}.text(ctx)
	if err != nil {
		return nil, false, err
	}
	if n, err := strconv.ParseInt(size, 10, 64); err != nil || n > MaxBranchFile {
		return nil, false, fmt.Errorf("%w: %s:%s is %s bytes (at most %d)", ErrTooLarge, repo.Name, clean, size, MaxBranchFile)
	}
	out, err := gitRun{dir: dir, args: []string{"cat-file", "blob", object}}.run(ctx)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

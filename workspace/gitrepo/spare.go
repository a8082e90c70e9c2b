package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/h9-app/h9/workspace"
)

// A spare is a checkout made ahead, for the next session on a repository
// and base branch: writing thousands of files is most of a session's
// start, so after each start h9 makes the next one's tree in the
// background, and that session takes it with a rename, writes its own
// refs and, when the base moved meanwhile, updates only the files that
// changed. It is made exactly as a session's checkout is (h9's git, h9's
// configuration, no command of any model ever ran in it) and waits under
// the workspaces' root, hidden from every command.

const (
	// spareBranch holds a spare's commit until a session names it.
	spareBranch = "h9/spare"
	// spareMark, in a spare's .git, is the commit its tree and index are at.
	spareMark = "h9-spare"
	// spareTimeout bounds making one spare.
	spareTimeout = 10 * time.Minute
	// staleSpareWork is how old an unfinished spare of another process
	// must be to be taken for a crash's leftover.
	staleSpareWork = time.Hour
)

func (r *Repos) sparePath(repo Repo, base string) (string, error) {
	return r.cfg.Workspaces.SpareDir(repo.Name + "@" + base)
}

// takeSpare moves the spare for repo and base, if there is one, into dir
// (an empty directory that becomes the session's workspace) and makes it
// the session's: the cache's packs linked, the refs and HEAD on the
// session branch at commit. It returns the commit the spare's tree is at
// ("" when there was no spare). The cache's lock must be held.
func (r *Repos) takeSpare(repo Repo, base, dir, branch, commit string, refs []ref) (string, error) {
	if !r.cfg.Spares {
		return "", nil
	}
	spare, err := r.sparePath(repo, base)
	if err != nil {
		return "", err
	}
	at, err := os.ReadFile(filepath.Join(spare, ".git", spareMark))
	if err != nil || !isCommitID(strings.TrimSpace(string(at))) {
		return "", nil
	}
	// rename(2) itself: it replaces an empty directory, which os.Rename refuses to.
	if err := syscall.Rename(spare, dir); err != nil {
		return "", nil // taken by another process meanwhile
	}
	gitDir := filepath.Join(dir, ".git")
	for _, leftover := range []string{spareMark, "logs", "ORIG_HEAD"} {
		os.RemoveAll(filepath.Join(gitDir, leftover))
	}
	if _, err := linkPacks(r.mirrorDir(repo), dir); err != nil {
		return "", err
	}
	if err := writePackedRefs(gitDir, checkoutRefs(refs, branch, commit)); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(at)), writeHead(gitDir, branch)
}

// moveTree brings a taken spare's tree and index from one commit to
// another, touching only the files that differ.
func (r *Repos) moveTree(ctx context.Context, dir, from, to string) error {
	if from == to {
		return nil
	}
	_, err := gitRun{dir: dir, args: []string{"-c", checkoutWorkers(), "read-tree", "-m", "-u", from, to}}.run(ctx)
	return err
}

// refill makes the next spare for repo and base in the background, unless
// spares are off, one is there, or one is being made.
func (r *Repos) refill(repo Repo, base string) {
	if !r.cfg.Spares {
		return
	}
	key := repo.Name + "@" + base
	r.mu.Lock()
	if r.refilling[key] || r.closed {
		r.mu.Unlock()
		return
	}
	r.refilling[key] = true
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer func() {
			r.mu.Lock()
			delete(r.refilling, key)
			r.mu.Unlock()
			r.wg.Done()
		}()
		ctx, cancel := context.WithTimeout(r.bg, spareTimeout+workspace.MaxBashTimeout) // its setup included
		defer cancel()
		r.spareErr.Store(errorOrNil{r.makeSpare(ctx, repo, base)})
	}()
}

// errorOrNil lets an atomic.Value hold a nil error.
type errorOrNil struct{ err error }

// makeSpare builds a spare beside its place and renames it in: a crash
// leaves an unfinished one, which a later refill removes once it is old.
func (r *Repos) makeSpare(ctx context.Context, repo Repo, base string) error {
	spare, err := r.sparePath(repo, base)
	if err != nil || exists(spare) {
		return err
	}
	removeStale(filepath.Dir(spare))
	tmp, err := os.MkdirTemp(filepath.Dir(spare), ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	unlock, err := r.locks.lock(ctx, filepath.Join(r.repoDir(repo), "lock"))
	if err != nil {
		return err
	}
	commit, err := r.startSpare(ctx, repo, base, tmp)
	unlock()
	if err != nil {
		return err
	}
	if err := r.finishCheckout(ctx, tmp); err != nil {
		return err
	}
	if err := r.setUpSpare(ctx, repo, tmp, commit); err != nil { // spare_setup.go
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".git", spareMark), []byte(commit+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, spare); err != nil && !exists(spare) {
		return err
	}
	return nil
}

// startSpare is a spare's part under the cache's lock: its refs and packs.
func (r *Repos) startSpare(ctx context.Context, repo Repo, base, dir string) (string, error) {
	refs, err := r.mirrorRefs(ctx, repo)
	if err != nil {
		return "", err
	}
	commit, ok := findRef(refs, "refs/heads/"+base)
	if !ok {
		return "", ErrNoBranch
	}
	_, err = r.initCheckout(ctx, repo, dir, spareBranch, commit, refs)
	return commit, err
}

// removeStale deletes unfinished spares a crash left.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && (strings.HasPrefix(e.Name(), ".new-") || strings.HasPrefix(e.Name(), ".home-")) && time.Since(info.ModTime()) > staleSpareWork {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// Close stops making spares and waits for the one in progress.
func (r *Repos) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
}

// WaitSpares waits until no spare is being made (tests, benchmarks) and
// returns the last one's error.
func (r *Repos) WaitSpares() error {
	r.wg.Wait()
	if v, ok := r.spareErr.Load().(errorOrNil); ok {
		return v.err
	}
	return nil
}

// Warm makes, in the background, a spare for each repository already in
// the cache (its configured base, else the remote's HEAD as last seen), so
// the first session after h9 starts takes one too.
func (r *Repos) Warm() {
	for _, repo := range r.repos {
		base := repo.Branch
		if base == "" {
			base = symbolicHead(r.mirrorDir(repo))
		}
		if base != "" && exists(filepath.Join(r.mirrorDir(repo), "HEAD")) {
			r.refill(repo, base)
		}
	}
}

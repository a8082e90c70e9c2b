package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// mirrorConfig is the cache's own configuration: every fetch keeps its
// pack (no loose objects, which would be hard-linked outside the pack
// directory the sandbox protects), and nothing ever deletes an object.
var mirrorConfig = [][2]string{
	{"fetch.unpackLimit", "1"},
	{"transfer.unpackLimit", "1"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"core.logAllRefUpdates", "false"},
}

// maxPacks is how many packs a cache collects before the small ones are
// rolled up (geometric repack: the big base pack stays, objects are kept).
const maxPacks = 16

// fetchedStamp is touched after every successful fetch of a cache.
const fetchedStamp = "h9-fetched"

// syncMirror brings repo's cache up to date, under its lock: created on
// first use, then fetched, unless another session's fetch finished while
// this one waited for the lock. When the remote cannot be reached and the
// cache has the repository, it goes on with the cache and says so in the
// warning.
func (r *Repos) syncMirror(ctx context.Context, repo Repo, waitedSince time.Time) (warning string, err error) {
	dir := r.mirrorDir(repo)
	if err := r.ensureMirror(ctx, repo); err != nil {
		return "", err
	}
	if fi, err := os.Stat(filepath.Join(dir, fetchedStamp)); err == nil && fi.ModTime().After(waitedSince) {
		return "", nil
	}
	fetch := gitRun{dir: dir, remote: r.remote(repo), args: []string{"fetch", "--quiet", "--prune", "--no-write-fetch-head",
		"--", repo.URL, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}}
	if _, ferr := fetch.run(ctx); ferr != nil {
		if ctx.Err() != nil || !hasRefs(ctx, dir) {
			return "", fmt.Errorf("fetching %s: %w", repo.Name, redactErr(ferr, repo, r.token(repo)))
		}
		return "could not fetch " + repo.Name + ", so the session starts from h9's cached copy: " + redactErr(ferr, repo, r.token(repo)).Error(), nil
	}
	now := time.Now()
	if err := os.WriteFile(filepath.Join(dir, fetchedStamp), nil, 0o600); err == nil {
		os.Chtimes(filepath.Join(dir, fetchedStamp), now, now)
	}
	return "", r.tidyMirror(ctx, dir)
}

// ensureMirror creates repo's cache once: initialised beside it and renamed
// into place, so no process ever sees half of one.
func (r *Repos) ensureMirror(ctx context.Context, repo Repo) error {
	dir := r.mirrorDir(repo)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(r.repoDir(repo), ".mirror-")
	if err != nil {
		return fmt.Errorf("creating the cache of %s: %w", repo.Name, err)
	}
	defer os.RemoveAll(tmp)
	if err := initBare(ctx, tmp, mirrorConfig); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("creating the cache of %s: %w", repo.Name, err)
	}
	return nil
}

// initBare makes an empty bare repository without templates (no sample
// hooks), with the given configuration.
func initBare(ctx context.Context, dir string, config [][2]string) error {
	if _, err := (gitRun{dir: dir, args: []string{"init", "--quiet", "--bare", "--template=", "."}}).run(ctx); err != nil {
		return err
	}
	return appendConfig(dir, config)
}

// mirrorRefs is the cache's branches and tags.
func (r *Repos) mirrorRefs(ctx context.Context, repo Repo) ([]ref, error) {
	out, err := gitRun{dir: r.mirrorDir(repo), args: []string{"for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/tags"}}.run(ctx)
	if err != nil {
		return nil, err
	}
	return listRefs(out), nil
}

func hasRefs(ctx context.Context, dir string) bool {
	out, err := gitRun{dir: dir, args: []string{"for-each-ref", "--count=1", "refs/heads"}}.text(ctx)
	return err == nil && out != ""
}

// tidyMirror packs stray loose objects (an older cache's) and rolls up
// small packs. Neither deletes an object: checkouts and session
// repositories rely on every one of them.
func (r *Repos) tidyMirror(ctx context.Context, dir string) error {
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if err != nil {
		return err
	}
	loose, err := hasLooseObjects(filepath.Join(dir, "objects"))
	if err != nil || (!loose && len(packs) <= maxPacks) {
		return err
	}
	args := []string{"repack", "-d", "--quiet"}
	if len(packs) > maxPacks {
		args = append(args, "--geometric=2")
	}
	_, err = gitRun{dir: dir, args: args}.run(ctx)
	return err
}

func hasLooseObjects(objects string) (bool, error) {
	entries, err := os.ReadDir(objects)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if len(e.Name()) == 2 && e.IsDir() {
			if sub, err := os.ReadDir(filepath.Join(objects, e.Name())); err == nil && len(sub) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// defaultBranch is the remote's HEAD: remembered in the cache once known,
// asked of the remote (ls-remote --symref) while the remembered one is
// missing from refs.
func (r *Repos) defaultBranch(ctx context.Context, repo Repo, refs []ref) (string, error) {
	dir := r.mirrorDir(repo)
	if head := symbolicHead(dir); head != "" {
		if _, ok := findRef(refs, "refs/heads/"+head); ok {
			return head, nil
		}
	}
	out, err := gitRun{dir: dir, remote: r.remote(repo), args: []string{"ls-remote", "--symref", "--", repo.URL, "HEAD"}}.text(ctx)
	if err != nil {
		return "", fmt.Errorf("asking %s for its default branch: %w", repo.Name, redactErr(err, repo, r.token(repo)))
	}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			name, _, _ := strings.Cut(rest, "\t")
			if ValidBranch(name) {
				return name, writeHead(dir, name)
			}
		}
	}
	return "", fmt.Errorf("%w: %s has no default branch; set its branch in H9_REPOS_FILE", ErrNoBranch, repo.Name)
}

// revParse resolves a name to a commit id in the repository at dir.
func revParse(ctx context.Context, dir, name string) (string, error) {
	return gitRun{dir: dir, args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", name + "^{commit}"}}.text(ctx)
}

// branchNames lists up to n branch names of refs, for a message.
func branchNames(refs []ref, n int) []string {
	var out []string
	for _, r := range refs {
		if name, ok := strings.CutPrefix(r.name, "refs/heads/"); ok && len(out) < n {
			out = append(out, name)
		}
	}
	return out
}

// exists reports whether path exists (errors other than "not there" count as there).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// CheckRemote asks the repository's remote for its branches (git
// ls-remote, with the credentials a fetch would use) and returns how many
// it has: h9 doctor's reachability check.
func (r *Repos) CheckRemote(ctx context.Context, name string) (branches int, err error) {
	repo, err := r.repo(name)
	if err != nil {
		return 0, err
	}
	// Outside any repository: the cache directory, with discovery stopped there.
	env := []string{"GIT_CEILING_DIRECTORIES=" + r.cfg.Dir}
	out, err := gitRun{dir: r.cfg.Dir, env: env, remote: r.remote(repo), args: []string{"ls-remote", "--heads", "--", repo.URL}}.text(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s is not reachable: %w", Redact(repo.URL), redactErr(err, repo, r.token(repo)))
	}
	if out == "" {
		return 0, nil
	}
	return len(strings.Split(out, "\n")), nil
}

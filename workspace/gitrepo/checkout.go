package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// checkoutConfig is a new checkout's configuration. The sandbox shows its
// pack directory read-only (the packs are the cache's, hard-linked), so git
// must not try to repack there.
func checkoutConfig(repo Repo, author Identity) [][2]string {
	return [][2]string{
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"index.version", "4"}, // paths prefix-compressed: a smaller index for big trees
		{"user.name", author.Name},
		{"user.email", author.Email},
		{"remote.origin.url", Redact(repo.URL)},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"},
	}
}

// linkPacks hard-links the cache's packs into a checkout's pack directory
// (copying them only where a link cannot be made, such as across file
// systems) and returns how many bytes it had to copy. The cache's lock
// must be held: the set of packs must not change meanwhile.
func linkPacks(mirror, checkout string) (copied int64, err error) {
	src := filepath.Join(mirror, "objects", "pack")
	dst := filepath.Join(checkout, ".git", "objects", "pack")
	entries, err := os.ReadDir(src)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "pack-") ||
			!(strings.HasSuffix(name, ".pack") || strings.HasSuffix(name, ".idx") || strings.HasSuffix(name, ".rev")) {
			continue
		}
		err := os.Link(filepath.Join(src, name), filepath.Join(dst, name))
		if errors.Is(err, fs.ErrExist) {
			continue // linked already (a spare taken later)
		}
		if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EMLINK) {
			n, cerr := copyFile(filepath.Join(src, name), filepath.Join(dst, name))
			copied, err = copied+n, cerr
		}
		if err != nil {
			return copied, fmt.Errorf("borrowing the cache's objects: %w", err)
		}
	}
	return copied, nil
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	return n, errors.Join(err, out.Close())
}

// checkoutRefs are the checkout's refs: the cache's branches as origin's,
// its tags, and the session branch at the base commit. Written as one
// packed-refs file, however many branches the repository has.
func checkoutRefs(mirror []ref, branch, base string) []ref {
	out := make([]ref, 0, len(mirror)+1)
	for _, r := range mirror {
		if name, isHead := strings.CutPrefix(r.name, "refs/heads/"); isHead {
			r.name = "refs/remotes/origin/" + name
		}
		out = append(out, r)
	}
	return append(out, ref{name: "refs/heads/" + branch, id: base})
}

// sortRefs orders "id ref" lines by ref, byte-wise, as packed-refs needs.
func sortRefs(lines []string) {
	ref := func(l string) string { return l[strings.IndexByte(l, ' ')+1:] }
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(ref(a), ref(b)) })
}

// initCheckout makes dir a repository whose objects are the cache's packs,
// whose refs are packed, with HEAD on the session branch and h9's
// configuration. The cache's lock must be held.
func (r *Repos) initCheckout(ctx context.Context, repo Repo, dir, branch, base string, refs []ref) (copied int64, err error) {
	if _, err := (gitRun{dir: dir, args: []string{"init", "--quiet", "--template=", "."}}).run(ctx); err != nil {
		return 0, err
	}
	if copied, err = linkPacks(r.mirrorDir(repo), dir); err != nil {
		return copied, err
	}
	gitDir := filepath.Join(dir, ".git")
	if err := writePackedRefs(gitDir, checkoutRefs(refs, branch, base)); err != nil {
		return copied, err
	}
	if err := writeHead(gitDir, branch); err != nil {
		return copied, err
	}
	return copied, appendConfig(gitDir, checkoutConfig(repo, r.cfg.Author))
}

// finishCheckout writes the checkout's working tree and index, with a
// worker per core: creating thousands of files is most of a session's
// start, and git's parallel checkout halves it on two cores (BENCHMARKS.md).
// h9's git runs here before any command of the model has: the
// configuration is h9's own.
func (r *Repos) finishCheckout(ctx context.Context, dir string) error {
	_, err := gitRun{dir: dir, args: []string{"-c", checkoutWorkers(), "reset", "--quiet", "--hard"}}.run(ctx)
	return err
}

// checkoutWorkers is git's parallel checkout, a worker per core.
func checkoutWorkers() string {
	return "checkout.workers=" + strconv.Itoa(min(runtime.NumCPU(), maxCheckoutWorkers))
}

// maxCheckoutWorkers bounds the parallel checkout's processes.
const maxCheckoutWorkers = 8

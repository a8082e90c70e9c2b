package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// A session's checkout: the repository's files on a new h9/… branch at
// the base's commit, origin's branches, objects hard-linked from the cache
// (no alternates: the cache is hidden from the sandbox), and git working
// inside the sandbox, in both modes.
func TestPrepareMakesASelfContainedCheckout(t *testing.T) {
	for _, sandbox := range []string{"bwrap", "none"} {
		t.Run(sandbox, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"README.md": "hello\n", "src/main.go": "package main\n"})
			pushToRemote(t, remote, "main", map[string]string{"CHANGELOG": "v2\n"})
			f := newFixture(t, sandbox, Repo{Name: "backend", URL: remote})
			s := f.prepare("backend")
			dir := f.dir(s)

			if s.Base != "main" {
				t.Errorf("base = %q, want the remote's HEAD main", s.Base)
			}
			if got := git(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/"+s.Branch {
				t.Errorf("HEAD = %s, want the session branch %s", got, s.Branch)
			}
			if got, want := git(t, dir, "rev-parse", "HEAD"), git(t, remote, "rev-parse", "main"); got != want {
				t.Errorf("HEAD at %s, want main's %s", got, want)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "src/main.go")); err != nil || string(data) != "package main\n" {
				t.Errorf("working tree: %q, %v", data, err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git/objects/info/alternates")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the checkout has alternates (%v): it must not depend on the hidden cache", err)
			}
			checkPacksLinked(t, dir, f.repos.mirrorDir(Repo{Name: "backend"}))

			ws := f.open(s)
			for _, readOnly := range []bool{true, false} {
				res := f.bash(ws, "git status --porcelain && git log --oneline origin/main | wc -l && git cat-file -t HEAD", readOnly)
				if res.ExitCode != 0 || !strings.Contains(res.Output, "2\ncommit") || strings.Contains(res.Output, "??") {
					t.Errorf("git in the sandbox (read-only %t): %s", readOnly, res.String())
				}
			}
		})
	}
}

// checkPacksLinked: every pack of the checkout is the cache's own file.
func checkPacksLinked(t *testing.T, checkout, mirror string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(checkout, ".git/objects/pack/*.pack"))
	if len(packs) == 0 {
		t.Fatal("the checkout has no pack")
	}
	for _, p := range packs {
		mine, theirs := inode(t, p), inode(t, filepath.Join(mirror, "objects/pack", filepath.Base(p)))
		if mine != theirs {
			t.Errorf("%s is not a hard link to the cache's pack", filepath.Base(p))
		}
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A second session on a cached repository transfers nothing again: no new
// pack; after an upstream commit, a pack of only the new objects.
func TestSecondSessionDoesNotTransferTheRepositoryAgain(t *testing.T) {
	remote := newRemote(t, map[string]string{"big.txt": strings.Repeat("line of a big file\n", 20000)})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	mirror := f.repos.mirrorDir(Repo{Name: "r"})
	f.prepare("r")
	before := packNames(t, mirror)
	f.prepare("r")
	if after := packNames(t, mirror); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("a second session on an unchanged remote added packs: %v → %v", before, after)
	}
	pushToRemote(t, remote, "main", map[string]string{"small.txt": "new\n"})
	s := f.prepare("r")
	after := packNames(t, mirror)
	if len(after) != len(before)+1 {
		t.Fatalf("packs %v → %v, want one more for the upstream commit", before, after)
	}
	for _, p := range after {
		if !slices.Contains(before, p) {
			if fi, _ := os.Stat(filepath.Join(mirror, "objects/pack", p)); fi.Size() > 4096 {
				t.Errorf("the fetch of one small commit brought %d bytes", fi.Size())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir(s), "small.txt")); err != nil {
		t.Errorf("the third session does not have the upstream commit: %v", err)
	}
}

func packNames(t *testing.T, repo string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repo, "objects/pack/*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

// The remote gone: a cached repository still starts sessions, saying so;
// an uncached one fails with git's words. A base branch the remote lacks
// is refused with the branches it has.
func TestPrepareWhenTheRemoteFails(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	f.prepare("r")
	if err := os.Rename(remote, remote+".gone"); err != nil {
		t.Fatal(err)
	}
	s := Session{ID: "T1-C1-1700000300.000001", Repo: "r", Branch: NewBranch("offline")}
	p, err := f.repos.Prepare(f.ctx, s)
	if err != nil || !strings.Contains(p.Warning, "cached copy") || !strings.Contains(p.Warning, "does not appear to be a git repository") {
		t.Errorf("Prepare with the remote gone = %+v, %v; want a start from the cache, with git's words", p, err)
	}
	g := newFixture(t, "none", Repo{Name: "r", URL: remote})
	if _, err := g.repos.Prepare(g.ctx, s); !errors.Is(err, ErrGit) {
		t.Errorf("Prepare of an uncached repository with the remote gone: %v, want ErrGit", err)
	}
	os.Rename(remote+".gone", remote)
	bad := Session{ID: "T1-C1-1700000300.000002", Repo: "r", Branch: NewBranch("x"), Base: "release-9"}
	if _, err := f.repos.Prepare(f.ctx, bad); !errors.Is(err, ErrNoBranch) || !strings.Contains(err.Error(), "it has main") {
		t.Errorf("Prepare on a missing base: %v", err)
	}
	if ok, _ := f.wsm.Exists(bad.ID); ok {
		t.Error("a failed Prepare left a workspace")
	}
}

package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// raceWatcher is the attack of issue 20 against a checkpoint: a clean
// filter (run by the checkpoint's own `git add`) prepares plant as
// .git/plant and starts a watcher that, the instant git has renamed the
// checkpoint's bundle into place in the workspace, renames the plant over
// it, before the checkpoint's shell has even exited. A big incompressible
// file makes the bundle's lock file live long enough to be seen.
func raceWatcher(plant string) string {
	return `#!/bin/bash
if mkdir "$TMPDIR/started" 2>/dev/null; then
	` + plant + `
	perl -e '$b = ".git/h9-checkpoint.bundle"; until (-e "$b.lock") {} while (-e "$b.lock") {}
		unlink $b if -d ".git/plant"; rename(".git/plant", $b)' </dev/null >/dev/null 2>&1 &
fi
exec cat
`
}

// otherSession is a second session of the same fixture with a private
// file committed in its workspace; it returns that workspace's .git and
// the private commit.
func otherSession(f *fixture) (gitDir, commit string) {
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 'private to U1' > private.txt && git add private.txt && git commit -qm private", false)
	dir := f.dir(s)
	return filepath.Join(dir, ".git"), git(f.t, dir, "rev-parse", "HEAD")
}

// A checkpoint takes only what the session's own sandboxed commit wrote:
// whatever the workspace puts where the bundle used to be (a "gitdir:"
// file, a symlink, a directory with a .git file, each naming another
// session's repository, at the instant git wrote it) never makes h9 fetch
// from another repository.
func TestCheckpointCannotBeRedirectedToAnotherRepository(t *testing.T) {
	plants := map[string]string{
		"gitdir file": `printf 'gitdir: %s\n' OTHER > .git/plant`,
		"symlink":     `ln -s OTHER .git/plant`,
		".git file":   `mkdir .git/plant; printf 'gitdir: %s\n' OTHER > .git/plant/.git`,
	}
	for _, sandbox := range []string{"bwrap", "landlock"} {
		for name, plant := range plants {
			t.Run(sandbox+"/"+name, func(t *testing.T) { raceCheckpoint(t, sandbox, plant) })
		}
	}
}

// raceCheckpoint runs the race of raceWatcher with plant in a sandbox.
func raceCheckpoint(t *testing.T, sandbox, plant string) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, sandbox, Repo{Name: "r", URL: remote})
	otherGit, private := otherSession(f)
	s := f.prepare("r")
	ws := f.open(s)
	dir := f.dir(s)
	writeFiles(t, dir, map[string]string{
		".w.sh":          raceWatcher(strings.ReplaceAll(plant, "OTHER", otherGit)),
		".gitattributes": "trigger.txt filter=w\n",
		"trigger.txt":    "go\n",
	})
	f.bash(ws, "git config filter.w.clean 'bash .w.sh' && head -c 30000000 /dev/urandom > big.bin", false)
	own := f.own(s)
	c, err := f.repos.Checkpoint(f.ctx, ws, s, "todo", nil)
	if gitMaybe(own, "cat-file", "-e", private+"^{commit}") == nil {
		t.Fatalf("the session's repository holds another session's private commit %s", private)
	}
	if files := git(t, own, "ls-tree", "-r", "--name-only", "refs/heads/"+s.Branch); strings.Contains(files, "private.txt") {
		t.Fatalf("the session branch has another session's file:\n%s", files)
	}
	if err != nil || c == nil || !strings.Contains(git(t, own, "ls-tree", "-r", "--name-only", c.ID), "big.bin") {
		t.Errorf("the session's own checkpoint was not taken: %+v, %v", c, err)
	}
}

// A workspace whose objects borrow from another session's repository
// (alternates), or whose .git is a file naming it, cannot bring that
// repository's objects into the checkpoint: the sandboxed git does not
// see it, and h9 fetches only the bundle the sandbox wrote.
func TestCheckpointOfABorrowingWorkspaceTakesNothingElse(t *testing.T) {
	plants := map[string]func(dir, other, private string) error{
		"alternates": func(dir, other, private string) error {
			os.WriteFile(filepath.Join(dir, ".git/objects/info/alternates"), []byte(other+"/objects\n"), 0o644)
			return os.WriteFile(filepath.Join(dir, ".git/HEAD"), []byte(private+"\n"), 0o644)
		},
		".git file": func(dir, other, _ string) error {
			os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, ".git.old"))
			return os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+other+"\n"), 0o644)
		},
	}
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			remote := newRemote(t, map[string]string{"a.txt": "x\n"})
			f := newFixture(t, "bwrap", Repo{Name: "r", URL: remote})
			otherGit, private := otherSession(f)
			s := f.prepare("r")
			ws := f.open(s)
			if err := plant(f.dir(s), otherGit, private); err != nil {
				t.Fatal(err)
			}
			own := f.own(s)
			before := git(t, own, "rev-parse", "refs/heads/"+s.Branch)
			c, err := f.repos.Checkpoint(f.ctx, ws, s, "todo", nil)
			if err == nil {
				t.Errorf("checkpoint of a workspace borrowing another repository = %+v, want an error", c)
			}
			if gitMaybe(own, "cat-file", "-e", private+"^{commit}") == nil {
				t.Fatalf("the session's repository holds another session's private commit")
			}
			if after := git(t, own, "rev-parse", "refs/heads/"+s.Branch); after != before {
				t.Errorf("the branch moved %s → %s", before, after)
			}
		})
	}
}

// takeBundle takes only a git bundle whose prerequisites the session's
// repository has: a "gitdir:" file h9 was given, or a bundle built on
// another repository's history, is refused and the branch stays.
func TestTakeBundleRefusesWhatIsNotThisSessionsBundle(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	otherGit, _ := otherSession(f)
	s := f.prepare("r")
	own := f.own(s)
	before := git(t, own, "rev-parse", "refs/heads/"+s.Branch)

	elsewhere := newRemote(t, map[string]string{"unrelated.txt": "other repository\n"})
	pushToRemote(t, elsewhere, "main", map[string]string{"more.txt": "on top\n"})
	foreign := filepath.Join(t.TempDir(), "foreign.bundle")
	git(t, elsewhere, "bundle", "create", foreign, "main", "^main~1")

	for name, content := range map[string][]byte{
		"gitdir file":            []byte("gitdir: " + otherGit + "\n"),
		"foreign prerequisites":  must(os.ReadFile(foreign)),
		"header then a redirect": []byte("# v2 git bundle\ngitdir: " + otherGit + "\n"),
		"empty":                  nil,
	} {
		file, err := os.CreateTemp(own, "test-*.bundle")
		if err != nil {
			t.Fatal(err)
		}
		file.Write(content)
		if err := f.repos.takeBundle(f.ctx, file, own, s.Branch); err == nil {
			t.Errorf("%s: taken", name)
		}
		file.Close()
		os.Remove(file.Name())
		if after := git(t, own, "rev-parse", "refs/heads/"+s.Branch); after != before {
			t.Errorf("%s: the branch moved %s → %s", name, before, after)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// gitMaybe runs git in dir and returns only whether it failed.
func gitMaybe(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), testEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

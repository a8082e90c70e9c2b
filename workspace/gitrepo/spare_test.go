package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// With spares, a session takes the checkout made ahead after the last
// start: the same result as a new checkout (files, branch, origin's
// refs, a clean status, a sound repository), the base moved on when
// upstream did, the borrowed packs still protected.
func TestSessionsTakeSpares(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n", "dir/b.txt": "b\n"})
	f := newFixture(t, "bwrap", Repo{Name: "r", URL: remote}, func(c *Config) { c.Spares = true })
	first := f.prepare("r")
	if err := f.repos.WaitSpares(); err != nil {
		t.Fatalf("making the spare: %v", err)
	}
	p, s := f.prepareAndReport("r")
	if !p.Spare {
		t.Fatal("the second session did not take the spare")
	}
	f.checkCheckout(s, "main")
	if err := f.repos.WaitSpares(); err != nil {
		t.Fatal(err)
	}

	head := pushToRemote(t, remote, "main", map[string]string{"new.txt": "upstream\n", "a.txt": "changed\n"})
	git(t, remote, "branch", "feature", head)
	p, s = f.prepareAndReport("r")
	if !p.Spare || p.BaseCommit != head {
		t.Fatalf("after an upstream commit: %+v, want the spare moved to %s", p, head)
	}
	f.checkCheckout(s, "main")
	dir := f.dir(s)
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "changed\n" {
		t.Errorf("a.txt = %q after moving the spare", data)
	}
	if got := git(t, dir, "rev-parse", "refs/remotes/origin/feature"); got != head {
		t.Errorf("origin/feature = %q, want the branch made after the spare", got)
	}
	ws := f.open(s)
	if res := f.bash(ws, "echo x >> .git/objects/pack/*.pack", false); res.ExitCode == 0 {
		t.Error("a taken spare's borrowed packs are writable in the sandbox")
	}
	if git(t, f.dir(first), "rev-parse", "HEAD") == "" {
		t.Error("the first session's checkout is gone")
	}
}

func (f *fixture) prepareAndReport(repo string) (Prepared, Session) {
	f.t.Helper()
	f.session++
	s := Session{ID: fmt.Sprintf("T1-C1-1700000400.%06d", f.session), Repo: repo, Branch: NewBranch("took one")}
	p, err := f.repos.Prepare(f.ctx, s)
	if err != nil {
		f.t.Fatalf("Prepare: %v", err)
	}
	s.Base = p.Base
	return p, s
}

// checkCheckout: HEAD on the session branch at the base, a clean tree
// whose index is up to date, no trace of the spare, fsck clean.
func (f *fixture) checkCheckout(s Session, base string) {
	t := f.t
	t.Helper()
	dir := f.dir(s)
	if got := git(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/"+s.Branch {
		t.Errorf("HEAD = %s", got)
	}
	if got, want := git(t, dir, "rev-parse", "HEAD"), git(t, f.remote, "rev-parse", base); got != want {
		t.Errorf("HEAD at %s, want %s", got, want)
	}
	if got := git(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("status: %s", got)
	}
	if got := git(t, dir, "fsck", "--no-dangling"); got != "" {
		t.Errorf("fsck: %s", got)
	}
	if refs := git(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads"); refs != "refs/heads/"+s.Branch {
		t.Errorf("branches %q, want only the session's", refs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", spareMark)); err == nil {
		t.Error("the spare's mark is left")
	}
}

// After a restart (a new Repos on the same data directory), Warm makes a
// spare for a cached repository, and the first session takes it.
func TestWarmAfterARestart(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	f.prepare("r")
	again, err := New(Config{Dir: filepath.Join(f.data, "repos"), Workspaces: f.wsm, Repos: []Repo{{Name: "r", URL: remote}},
		Author: Identity{"h9", "h9@localhost"}, Spares: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	again.Warm()
	if err := again.WaitSpares(); err != nil {
		t.Fatal(err)
	}
	f.repos = again
	if p, s := f.prepareAndReport("r"); !p.Spare {
		t.Errorf("the first session after the restart made its own checkout")
	} else {
		f.checkCheckout(s, "main")
	}
}

package gitrepo

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Sessions start at once on one repository from two h9 processes sharing
// the data directory (two Repos: only the file lock is common to them),
// while upstream moves: every checkout is whole and the cache is sound.
func TestConcurrentSessionsShareTheCache(t *testing.T) {
	for _, spares := range []bool{false, true} {
		t.Run(fmt.Sprintf("spares=%t", spares), func(t *testing.T) { concurrentSessions(t, spares) })
	}
}

func concurrentSessions(t *testing.T, spares bool) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote}, func(c *Config) { c.Spares = spares })
	other, err := New(Config{Dir: filepath.Join(f.data, "repos"), Workspaces: f.wsm, Repos: []Repo{{Name: "r", URL: remote}},
		Author: Identity{"h9", "h9@localhost"}, Spares: spares})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	sessions := make([]Session, 8)
	for i := range sessions {
		sessions[i] = Session{ID: fmt.Sprintf("T1-C1-1700000100.%06d", i), Repo: "r", Branch: NewBranch("concurrent")}
		repos := f.repos
		if i%2 == 1 {
			repos = other
		}
		wg.Add(1)
		go func(repos *Repos, s Session) {
			defer wg.Done()
			if _, err := repos.Prepare(ctx, s); err != nil {
				errs <- err
			}
		}(repos, sessions[i])
	}
	for i := 0; i < 3; i++ {
		pushToRemote(t, remote, "main", map[string]string{fmt.Sprintf("up%d", i): "x\n"})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Prepare: %v", err)
	}
	for _, s := range sessions {
		dir := f.dir(s)
		if got := git(t, dir, "fsck", "--no-dangling"); got != "" {
			t.Errorf("%s: fsck: %s", s.ID, got)
		}
		if got := git(t, dir, "status", "--porcelain"); got != "" {
			t.Errorf("%s: checkout not clean: %s", s.ID, got)
		}
	}
	if got := git(t, f.repos.mirrorDir(Repo{Name: "r"}), "fsck", "--no-dangling"); got != "" {
		t.Errorf("cache: fsck: %s", got)
	}
}

// A crash half-way leaves nothing a later Prepare trips on: a cache
// directory being made, a session repository without a checkout.
func TestPrepareAgainAfterAnInterruptedOne(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := Session{ID: "T1-C1-1700000200.000001", Repo: "r", Branch: NewBranch("again")}
	ctx, cancel := context.WithCancel(f.ctx)
	cancel() // the first attempt dies at once
	if _, err := f.repos.Prepare(ctx, s); err == nil {
		t.Fatal("Prepare with a cancelled context succeeded")
	}
	p, err := f.repos.Prepare(f.ctx, s)
	if err != nil {
		t.Fatalf("Prepare after an interrupted one: %v", err)
	}
	again, err := f.repos.Prepare(f.ctx, s)
	if err != nil || again.BaseCommit != p.BaseCommit || again.Base != "main" {
		t.Errorf("a third Prepare = %+v, %v; want the same base as %+v", again, err, p)
	}
}

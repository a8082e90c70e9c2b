package gitrepo

import (
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A push lands the session branch on the remote; pushing again after more
// work updates it; a hook's refusal and someone else's commit on the
// branch are reported with git's reason, and that commit is not lost.
func TestPush(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 1 > one", false)
	c1, err := f.repos.Checkpoint(f.ctx, ws, s, "one", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.repos.Push(f.ctx, s)
	if err != nil || p.Commit != c1.ID || p.UpToDate {
		t.Fatalf("push = %+v, %v", p, err)
	}
	if p, err := f.repos.Push(f.ctx, s); err != nil || !p.UpToDate {
		t.Errorf("second push = %+v, %v; want up to date", p, err)
	}
	f.bash(ws, "echo 2 > two && git add two && git commit -q --amend -m rewritten", false) // the session rewrites its own history
	c2, err := f.repos.Checkpoint(f.ctx, ws, s, "two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatalf("push of a rewritten session branch: %v", err)
	}
	if got := git(t, remote, "rev-parse", "refs/heads/"+s.Branch); got != c2.ID {
		t.Errorf("remote at %s, want %s", got, c2.ID)
	}

	// Someone else pushes to the branch: h9 must not overwrite it.
	theirs := pushToRemote(t, remote, s.Branch, map[string]string{"theirs": "x\n"})
	f.bash(ws, "echo 3 > three", false)
	if _, err := f.repos.Checkpoint(f.ctx, ws, s, "three", nil); err != nil {
		t.Fatal(err)
	}
	_, err = f.repos.Push(f.ctx, s)
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "stale info") {
		t.Errorf("push over someone else's commit: %v, want rejected (stale info)", err)
	}
	if got := git(t, remote, "rev-parse", "refs/heads/"+s.Branch); got != theirs {
		t.Errorf("their commit was overwritten: remote at %s, want %s", got, theirs)
	}
}

func TestPushRefusedByAHookSaysWhy(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	hook := filepath.Join(remote, "hooks", "pre-receive")
	os.WriteFile(hook, []byte("#!/bin/sh\necho 'branch protection: h9/* needs a review' >&2\nexit 1\n"), 0o755)
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 1 > one", false)
	if _, err := f.repos.Checkpoint(f.ctx, ws, s, "one", nil); err != nil {
		t.Fatal(err)
	}
	_, err := f.repos.Push(f.ctx, s)
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "branch protection: h9/* needs a review") {
		t.Errorf("push refused by a hook: %v, want ErrRejected with the hook's words", err)
	}
}

// An https remote on GitHub that wants the token: h9's git gets it from
// the credential helper, and the token is nowhere on disk: not in the
// cache, the session's repository, the workspace, nor the sandbox's
// environment; nor, while the push runs, in the environment of any process
// (h9's git children included).
func TestTokenReachesGitOnlyThroughTheHelper(t *testing.T) {
	const token = "ghp_SECRET_TOKEN_42"
	remote, served := httpRemote(t, token)
	f := newFixture(t, "none", Repo{Name: "r", URL: remote, GitHub: "acme/r"}, func(c *Config) { c.GitHubToken = token })
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 1 > one", false)
	if _, err := f.repos.Checkpoint(f.ctx, ws, s, "one", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatalf("push with the token: %v", err)
	}
	if !served.authed() {
		t.Fatal("the remote never saw the token: the test proves nothing")
	}
	if leaks := served.leaked(); len(leaks) > 0 {
		t.Errorf("during the push the token was in the environment of %v", leaks)
	}
	if res := f.bash(ws, "env; cat .git/config", false); strings.Contains(res.Output, token) {
		t.Error("the token is in the sandbox's environment or the workspace's config")
	}
	filepath.Walk(f.data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), token) {
				t.Errorf("the token is written in %s", p)
			}
		}
		return nil
	})

	// Without the token the same push is refused by the remote.
	g := newFixture(t, "none", Repo{Name: "r", URL: remote, GitHub: "acme/r"})
	if _, err := g.repos.CheckRemote(g.ctx, "r"); err == nil {
		t.Error("ls-remote without the token succeeded: the remote does not check it")
	}
}

// servedRemote records whether an authorised request came in.
type servedRemote struct {
	mu    sync.Mutex
	ok    bool
	leaks []string // processes whose environment held the token during a request
}

func (s *servedRemote) authed() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.ok }

func (s *servedRemote) leaked() []string { s.mu.Lock(); defer s.mu.Unlock(); return s.leaks }

// environsHolding names the processes of this machine whose environment
// (/proc/<pid>/environ, what any process of the same user can read)
// contains secret.
func environsHolding(secret string) []string {
	var found []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		if env, err := os.ReadFile(p + "/environ"); err == nil && strings.Contains(string(env), secret) {
			comm, _ := os.ReadFile(p + "/comm")
			found = append(found, p+" ("+strings.TrimSpace(string(comm))+")")
		}
	}
	return found
}

// httpRemote serves a bare repository over smart HTTP (git http-backend)
// and wants Basic auth with the token as password, as GitHub does.
func httpRemote(t *testing.T, token string) (string, *servedRemote) {
	t.Helper()
	bare := newRemote(t, map[string]string{"a.txt": "x\n"})
	git(t, bare, "config", "http.receivepack", "true")
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"},
	}
	served := &servedRemote{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); !ok || pass != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		leaks := environsHolding(token) // while h9's git children wait for this answer
		served.mu.Lock()
		served.ok = true
		served.leaks = append(served.leaks, leaks...)
		served.mu.Unlock()
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(bare), served
}

// The session's branch was merged and deleted on the remote (or someone
// fast-forwarded it within the session's history): a later push recreates
// or moves it, losing nothing.
func TestPushAfterTheRemoteBranchWasDeleted(t *testing.T) {
	remote := newRemote(t, map[string]string{"a.txt": "x\n"})
	f := newFixture(t, "none", Repo{Name: "r", URL: remote})
	s := f.prepare("r")
	ws := f.open(s)
	f.bash(ws, "echo 1 > one", false)
	if _, err := f.repos.Checkpoint(f.ctx, ws, s, "one", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatal(err)
	}
	git(t, remote, "update-ref", "-d", "refs/heads/"+s.Branch)
	f.bash(ws, "echo 2 > two", false)
	c, err := f.repos.Checkpoint(f.ctx, ws, s, "two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.repos.Push(f.ctx, s); err != nil {
		t.Fatalf("push after the remote branch was deleted: %v", err)
	}
	if got := git(t, remote, "rev-parse", "refs/heads/"+s.Branch); got != c.ID {
		t.Errorf("remote at %s, want %s", got, c.ID)
	}
}

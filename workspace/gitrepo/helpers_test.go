package gitrepo

import (
	"context"
	"fmt"
	"github.com/h9-app/h9/workspace/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace"
)

// testAuthor commits the tests' own history (the remote's).
var testEnv = []string{
	"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
	"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com",
	"GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent",
}

// git runs git in dir for a test and returns its trimmed output.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), testEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRemote is a bare repository with one commit on main holding files.
func newRemote(t testing.TB, files map[string]string) string {
	t.Helper()
	testenv.Full(t, "real git repositories")
	root := t.TempDir()
	work, bare := filepath.Join(root, "work"), filepath.Join(root, "remote.git")
	git(t, root, "init", "--quiet", "-b", "main", work)
	writeFiles(t, work, files)
	git(t, work, "add", "-A")
	git(t, work, "commit", "--quiet", "-m", "initial")
	git(t, root, "clone", "--quiet", "--bare", work, bare)
	return bare
}

// pushToRemote adds a commit with files on the remote's branch.
func pushToRemote(t testing.TB, remote, branch string, files map[string]string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "w")
	git(t, filepath.Dir(work), "clone", "--quiet", "-b", branch, remote, work)
	writeFiles(t, work, files)
	git(t, work, "add", "-A")
	git(t, work, "commit", "--quiet", "-m", "upstream change")
	git(t, work, "push", "--quiet", "origin", branch)
	return git(t, work, "rev-parse", "HEAD")
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is a data directory with workspaces and repository caches, as
// cmd/h9 lays it out (the whole data directory hidden from the sandbox).
type fixture struct {
	t       testing.TB
	ctx     context.Context
	data    string
	wsm     *workspace.Manager
	repos   *Repos
	remote  string
	session int
}

func newFixture(t testing.TB, sandbox string, repo Repo, configure ...func(*Config)) *fixture {
	t.Helper()
	testenv.Full(t, "real checkouts, spares and sessions")
	testenv.Need(t, "git")
	switch sandbox {
	case "bwrap":
		testenv.Need(t, "bwrap")
	case "landlock":
		testenv.Need(t, "landlock:1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	data := t.TempDir()
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(data, "workspaces"), Sandbox: sandbox, Hidden: []string{data}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dir: filepath.Join(data, "repos"), Workspaces: wsm, Repos: []Repo{repo}, Author: Identity{"h9", "h9@localhost"}}
	for _, f := range configure {
		f(&cfg)
	}
	repos, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repos.Close) // before the data directory goes: a spare may be in the making
	return &fixture{t: t, ctx: ctx, data: data, wsm: wsm, repos: repos, remote: repo.URL}
}

// prepare starts a new session on repo and returns it prepared.
func (f *fixture) prepare(repo string) Session {
	f.t.Helper()
	f.session++
	s := Session{ID: fmt.Sprintf("T1-C1-%d.000%d", 1700000000+f.session, f.session), Repo: repo, Branch: NewBranch("test task")}
	p, err := f.repos.Prepare(f.ctx, s)
	if err != nil {
		f.t.Fatalf("Prepare: %v", err)
	}
	s.Base = p.Base
	return s
}

func (f *fixture) dir(s Session) string {
	f.t.Helper()
	d, err := f.wsm.Path(s.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) open(s Session) *workspace.Workspace {
	f.t.Helper()
	ws, err := f.wsm.Open(s.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ws.Close() })
	return ws
}

// bash runs a command in the session's workspace, as the model would.
func (f *fixture) bash(ws *workspace.Workspace, command string, readOnly bool) workspace.BashResult {
	f.t.Helper()
	res, err := ws.Bash(f.ctx, command, workspace.BashOptions{ReadOnly: readOnly})
	if err != nil {
		f.t.Fatalf("bash %q: %v", command, err)
	}
	return res
}

// own is the session's repository in the cache.
func (f *fixture) own(s Session) string {
	f.t.Helper()
	repo, _ := f.repos.Get(s.Repo)
	d, err := f.repos.sessionDir(repo, s.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

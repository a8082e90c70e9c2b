package bot

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/gitrepo"
)

const testGitHubToken = "ghp_test_token_SECRET_123"

// syncBuffer collects log lines from several goroutines.
type syncBuffer = h9test.LogBuffer

// repoEnv is a bot with one repository "backend" on a local bare remote,
// which a fake GitHub also serves as acme/backend.
type repoEnv struct {
	*env
	remote string
	github *fakegithub.Server
	data   string
}

func newRepoEnv(t *testing.T, setup string, cfgFn ...func(*Config)) *repoEnv {
	t.Helper()
	return newRepoEnvOf(t, gitrepo.Repo{Setup: setup}, cfgFn...)
}

// newRepoEnvOf is newRepoEnv with more of the repository's keys (its
// name, URL and github: are the env's).
func newRepoEnvOf(t *testing.T, repo gitrepo.Repo, cfgFn ...func(*Config)) *repoEnv {
	t.Helper()
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n", "main.go": "package main\n"})
	gh := h9test.GitHub(t, testGitHubToken, "acme/backend", remote)
	repo.Name, repo.URL, repo.GitHub = "backend", remote, "acme/backend"
	e := prepareEnv(t, data, cfgFn...)
	e.logs = &syncBuffer{}
	e.repos = reposFor(t, data, gitrepo.Config{Repos: []gitrepo.Repo{repo}, GitHubToken: testGitHubToken, GitHubAPI: gh.URL()})
	e.slack.AddUser(testUser, "Ada Lovelace")
	e.slack.SetEmail(testUser, "ada@example.com")
	e.start()
	return &repoEnv{env: e, remote: remote, github: gh, data: data}
}

// reposFor is a test's e.repos: the repositories of cfg, kept under
// data/repos with h9's test identity, closed with the test.
func reposFor(t testing.TB, data string, cfg gitrepo.Config) func(*workspace.Manager) Repos {
	return func(ws *workspace.Manager) Repos { return openRepos(t, data, ws, cfg) }
}

// openRepos is reposFor's gitrepo.New over the workspaces ws.
func openRepos(t testing.TB, data string, ws *workspace.Manager, cfg gitrepo.Config) *gitrepo.Repos {
	t.Helper()
	cfg.Dir, cfg.Workspaces, cfg.Author = filepath.Join(data, "repos"), ws, gitrepo.Identity{Name: "h9", Email: "h9@localhost"}
	r, err := gitrepo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// newTestRemote is a bare repository with one commit on main.
func newTestRemote(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	work, bare := filepath.Join(root, "work"), filepath.Join(root, "backend.git")
	runGit(t, root, "init", "--quiet", "-b", "main", work)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, work, "add", "-A")
	runGit(t, work, "commit", "--quiet", "-m", "initial")
	runGit(t, root, "clone", "--quiet", "--bare", work, bare)
	return bare
}

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

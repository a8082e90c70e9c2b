package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/bot/h9test"
)

const binGitHubToken = "ghp_binenv_github_9d4e-secret"

// A new user's path with a repository, through the real binary and the
// sandbox h9 picks by default: H9_REPOS_FILE with a setup command, a task
// on the repository, its outcome, Open pull request. The token is never in
// the sandbox (setup and the model ran env there), the logs, Slack, or on
// disk.
func TestBinaryRepositorySession(t *testing.T) {
	remote := bareRepo(t)
	gh := h9test.GitHub(t, binGitHubToken, "acme/backend", remote)
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n  - name: backend\n    url: "+remote+"\n    github: acme/backend\n    setup: env > .setup-env\n"), 0o600)
	e := newBinEnv(t, "H9_SANDBOX=auto", "H9_REPOS_FILE="+file, "H9_GITHUB_TOKEN="+binGitHubToken, "H9_GITHUB_API_URL="+gh.URL())
	e.start()
	thread, outcome := e.helloRun("echo hello > hello.txt && env && cat .setup-env && rm .setup-env")
	if !strings.Contains(string(outcome.Blocks), "hello.txt") {
		t.Errorf("outcome: %s", outcome.Blocks)
	}
	e.openRequest(thread, outcome)
	if pulls := gh.Pulls("acme/backend"); len(pulls) != 1 || pulls[0].Title != "say hello in a file" {
		t.Errorf("pull requests = %+v", pulls)
	}
	e.stop()
	e.checkSecretsKept(binGitHubToken, binBotToken, binAppToken, binAPIKey)
}

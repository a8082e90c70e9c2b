package bot

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// pushRepoFile commits one file (directories made) on the remote's main.
func pushRepoFile(t *testing.T, remote, name, content string) {
	t.Helper()
	work := filepath.Join(t.TempDir(), "w")
	runGit(t, filepath.Dir(work), "clone", "--quiet", "-b", "main", remote, work)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(work, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, work, "add", "-A")
	runGit(t, work, "commit", "--quiet", "-m", "automations")
	runGit(t, work, "push", "--quiet", "origin", "main")
}

// A repository's own .h9/automations.yaml is in force once h9 fetches it;
// an invalid push is said once in the repository's channel, and the last
// valid version stays, across a restart too.
func TestRepositoryAutomationsFile(t *testing.T) {
	testenv.Full(t, "a real git repository and a whole bot")
	testenv.Need(t, "git")
	t.Setenv("H9_TEST_REPO_HOOK", "s3cret")
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	pushRepoFile(t, remote, ".h9/automations.yaml", `automations:
  - name: nightly
    channel: `+testChannel+`
    owner: U1
    task: Bump the dependencies
    on:
      schedule: "0 3 * * *"
  - name: deploy
    channel: `+testChannel+`
    owner: U1
    task: Look at the deploy
    on:
      webhook: {secret_env: H9_TEST_REPO_HOOK}
`)
	data := t.TempDir()
	e := prepareEnv(t, data, func(c *Config) {
		c.AutomationMinInterval = 60e9
		c.Admins = []string{"U0ADMIN01"}
	})
	e.repos = reposFor(t, data, gitrepo.Config{Repos: []gitrepo.Repo{{Name: "backend", URL: remote, Channels: []string{testChannel}}}})
	e.start()

	// listed asks /h9 automations now and then until a new answer lists
	// every one of wants.
	listed := func(wants ...string) func() bool {
		n, before := 0, len(e.slack.Ephemerals(testChannel, "U1"))
		return func() bool {
			if n++; n%20 == 1 {
				e.slash("U1", testChannel, "automations")
			}
			for _, m := range e.slack.Ephemerals(testChannel, "U1")[before:] {
				ok := true
				for _, w := range wants {
					ok = ok && strings.Contains(m.Text, w)
				}
				if ok {
					return true
				}
			}
			return false
		}
	}
	e.waitFor("the repository's automations listed", listed("*backend/nightly* — schedule `0 3 * * *` (UTC) · next ", "*backend/deploy* — webhook"))

	// Its webhook answers at /hooks/<repo>/<name>.
	srv := httptest.NewServer(e.bot.HookHandler())
	t.Cleanup(srv.Close)
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	if code, answer := signedPost(t, srv.URL+"/hooks/backend/deploy", []byte(`{"x":1}`), time.Now(), "s3cret"); code != http.StatusAccepted {
		t.Fatalf("the repository's webhook: %d %s", code, answer)
	}
	e.waitFor("the webhook's session", func() bool {
		for _, m := range rootsIn(e, testChannel) {
			if strings.Contains(m.Text, "Automation *backend/deploy*") {
				return true
			}
		}
		return false
	})

	invalid := func() []fakeslack.Message {
		var out []fakeslack.Message
		for _, m := range e.slack.Messages(testChannel) {
			if m.BotID != "" && strings.Contains(m.Text, "could not load backend/.h9/automations.yaml") {
				out = append(out, m)
			}
		}
		return out
	}
	// An invalid push: a misspelt key. A session's start fetches the
	// repository, and the file is read again.
	pushRepoFile(t, remote, ".h9/automations.yaml", `automations:
  - name: nightly
    channel: `+testChannel+`
    owner: U1
    tsk: Bump the dependencies
    on:
      schedule: "0 3 * * *"
`)
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread := e.startSession("plan", "fix the build")
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.waitFor("the invalid file said", func() bool { return len(invalid()) == 1 })
	said := invalid()[0].Text
	for _, want := range []string{"backend/.h9/automations.yaml", "line 5", "tsk", "last valid version stays"} {
		if !strings.Contains(said, want) {
			t.Errorf("the invalid file is said as %q, without %q", said, want)
		}
	}
	e.waitFor("the last valid version still listed", listed("*backend/nightly*", "*backend/deploy*"))

	// A restart reads the same invalid file: the last valid version is in
	// force again from the store, and nothing is said twice.
	e.restart()
	e.waitFor("the last valid version listed after a restart", listed("*backend/nightly*", "*backend/deploy*"))
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread = e.startSession("plan", "fix the build again")
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	if n := len(invalid()); n != 1 {
		t.Errorf("the invalid file was said %d times", n)
	}

	// A valid push with one automation left replaces the repository's.
	pushRepoFile(t, remote, ".h9/automations.yaml", `automations:
  - name: weekly
    channel: `+testChannel+`
    owner: U1
    task: Bump the dependencies
    on:
      schedule: "0 3 * * 1"
`)
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	e.startSession("plan", "and again")
	n := 0
	e.waitFor("the new version listed", func() bool {
		if n++; n%20 == 1 {
			e.slash("U1", testChannel, "automations")
		}
		ms := e.slack.Ephemerals(testChannel, "U1")
		last := ms[len(ms)-1].Text
		return strings.Contains(last, "*backend/weekly*") && !strings.Contains(last, "backend/nightly")
	})
}

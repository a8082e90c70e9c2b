package bot

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// The root message links its source (ARCHITECTURE.md, "Automations"): a
// matched message's permalink, and a failing check's run on the forge.
// Both through the whole bot, the fake Slack and the fake GitHub.

func TestAutomationMessageSourceIsItsPermalink(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the bot")
	src := `automations:
  - name: alerts
    owner: U1
    task: Look into the alert
    on:
      message: {channel: ` + alertChannel + `, from: [` + alertBot + `], match: "FIRING"}
`
	e, _ := automationsEnv(t, src)
	e.model.Enqueue(planReplies("plan ready", "1:pending")...)
	ts, err := e.slack.PostAppMessage(e.ctx, fakeslack.AppMessage{Channel: alertChannel, BotID: alertBot, Username: "alertmanager",
		Text: "[FIRING:1] DiskFull on db-1"})
	if err != nil {
		t.Fatal(err)
	}
	var root fakeslack.Message
	e.waitFor("the automation's root message in the alert's thread", func() bool {
		for _, m := range e.slack.Thread(alertChannel, ts) {
			if m.TS != ts && strings.Contains(m.Text, "Automation *alerts*") {
				root = m
				return true
			}
		}
		return false
	})
	want := "Source: message " + fakeslack.Permalink(alertChannel, ts, "")
	if got := sourceOf(root); got != want {
		t.Errorf("root message's source %q; want %q", got, want)
	}
}

func TestAutomationCheckSourceLinksTheFailingRun(t *testing.T) {
	testenv.Full(t, "a real git repository, the fake GitHub and a whole bot")
	testenv.Need(t, "git")
	data := t.TempDir()
	remote := newTestRemote(t, map[string]string{"README.md": "# backend\n"})
	head := strings.TrimSpace(runGit(t, data, "--git-dir="+remote, "rev-parse", "main"))
	gh := h9test.GitHub(t, testGitHubToken, "acme/backend", remote)
	path := filepath.Join(t.TempDir(), "automations.yaml")
	if err := os.WriteFile(path, []byte(`automations:
  - name: red
    channel: `+autoChannel+`
    owner: U1
    repo: backend
    task: Make the build green
    on: {check: {branch: main}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := prepareEnv(t, data, func(c *Config) {
		c.AutomationsFile = path
		c.AutomationMinInterval = time.Minute
		c.Forges, c.ForgePoll = c.Repos.(Forges), testPoll
	})
	e.repos = reposFor(t, data, gitrepo.Config{Repos: []gitrepo.Repo{{Name: "backend", URL: remote, GitHub: "acme/backend", Channels: []string{autoChannel}}},
		GitHubToken: testGitHubToken, GitHubAPI: gh.URL()})
	e.model.Enqueue(planReplies("plan ready", "1:pending")...)
	e.start()
	id := gh.AddCheckRun("acme/backend", head, "unit-tests", "ci", "failure", "")
	var root fakeslack.Message
	e.waitFor("the check automation's root message", func() bool {
		rs := rootsIn(e, autoChannel)
		if len(rs) > 0 {
			root = rs[0]
		}
		return len(rs) > 0
	})
	want := "Source: failing checks on main at " + head[:12] + " " + strings.TrimSuffix(gh.URL(), "/") + "/acme/backend/runs/" + strconv.FormatInt(id, 10)
	if got := sourceOf(root); got != want {
		t.Errorf("root message's source %q; want %q", got, want)
	}
}

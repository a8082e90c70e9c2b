package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/bot/render"
)

// Two replicas on PostgreSQL fire each kind of automation once
// (ARCHITECTURE.md, "Automations": "Once, everywhere"): one signed
// webhook sent to both, another app's message delivered to both, an
// issue label and a failing check both pollers see, a schedule's
// catch-up both replicas start with, and `/h9 automations run`. Each
// ends as one root message, one session (one checklist) and, for the
// issue, one comment.
func TestFleetBinaryAutomationsFireOnce(t *testing.T) {
	remote := bareRepo(t)
	gh := h9test.GitHub(t, binGitHubToken, "acme/backend", remote)
	gh.SetPermission("alice", "write")
	dir := t.TempDir()
	repos := filepath.Join(dir, "repos.yml")
	os.WriteFile(repos, []byte("repos:\n  - name: backend\n    url: "+remote+"\n    github: acme/backend\n    channels: [C1]\n"), 0o600)
	autos := filepath.Join(dir, "automations.yaml")
	os.WriteFile(autos, []byte(`automations:
  - name: deploy
    channel: C1
    owner: U1
    task: 'Find why the deploy of {{.service}} failed'
    on:
      webhook: {secret_env: `+binHookEnv+`}
  - name: alerts
    owner: U1
    task: Look into the alert and propose a fix
    on:
      message: {channel: `+binAlerts+`, from: [`+binAlertBot+`], match: "FIRING"}
  - name: triage
    repo: backend
    channel: C1
    owner: U1
    task: Plan a fix for the issue
    on:
      issue: {label: h9}
  - name: red
    repo: backend
    channel: C1
    owner: U1
    task: Find why the build is red
    on:
      check: {branch: main}
  - name: tidy
    channel: C1
    owner: U1
    task: Tidy up the changelog
    on:
      schedule: "*/5 * * * *"
  - name: chores
    channel: C1
    owner: U1
    task: Do the weekly chores
    on:
      schedule: "0 9 * * 1"
`), 0o600)
	f := newFleetBin(t, "H9_AUTOMATIONS_FILE="+autos, "H9_AUTOMATION_MIN_INTERVAL=5m", binHookEnv+"="+binHookSecret, "H9_ADMINS=U0ADMIN01",
		"H9_REPOS_FILE="+repos, "H9_GITHUB_TOKEN="+binGitHubToken, "H9_GITHUB_API_URL="+gh.URL(), "H9_FORGE_POLL=10s")
	f.slack.AddChannel(binAlerts, "alerts")
	f.model.SetHandler(scriptedSession)
	// The fleet was down for 17 minutes: both replicas catch tidy up.
	st, err := pgstore.Open(f.ctx, f.dbURL, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	down := time.Now().Add(-17 * time.Minute)
	if _, err := st.PutAutomationState(f.ctx, store.AutomationState{Name: "tidy", LastFired: down, FirstLoaded: down}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	hooks := map[string]*autoBin{}
	for _, name := range []string{"r1", "r2"} {
		addr := freeLoopbackAddr(t)
		f.start(name, "H9_HTTP_ADDR="+addr)
		hooks[name] = &autoBin{binEnv: f.binEnv, hooks: "http://" + addr}
		hooks[name].waitHooks()
	}
	// The pollers' first look only notes when the automations were first
	// loaded; GitHub's event times are in whole seconds.
	time.Sleep(1500 * time.Millisecond)

	// One signed delivery, sent to both replicas at once.
	body, signed := []byte(`{"service":"api"}`), time.Now()
	var wg sync.WaitGroup
	answers := make(chan hookResult, 2)
	for _, h := range hooks {
		wg.Go(func() { answers <- postHook(f.ctx, h.hooks, "deploy", body, signed, binHookSecret) })
	}
	wg.Wait()
	close(answers)
	codes := map[int]int{}
	for a := range answers {
		codes[a.code]++
	}
	if codes[http.StatusAccepted] != 1 || codes[http.StatusOK] != 1 {
		t.Errorf("the two replicas answered %v, want one 202 and one 200", codes)
	}

	// Another app's message, delivered to both, then once more to r2 under
	// a new event ID.
	alert := fakeslack.AppMessage{Channel: binAlerts, BotID: binAlertBot, Username: "alertmanager", Text: "[FIRING:1] DiskFull on db-1"}
	f.slack.Fanout(2)
	ts, err := f.slack.PostAppMessage(f.ctx, alert)
	f.slack.Fanout(1)
	if err != nil {
		t.Fatal(err)
	}
	f.slack.Prefer("r2")
	if _, err := f.slack.SendEvent(f.ctx, "", f.slack.AppMessageEvent(alert, ts)); err != nil {
		t.Fatal(err)
	}
	f.slack.Prefer("")

	issue := gh.AddIssue("acme/backend", "alice", "Crash on start", "The app crashes on start.")
	gh.Label("acme/backend", issue, "h9", "alice")
	gh.AddCheckRun("acme/backend", gitInBare(t, remote, "rev-parse", "main"), "build", "github-actions", "failure", "--- FAIL: TestStart\n")
	f.slash("automations run chores")

	threads := map[string]string{}
	for _, name := range []string{"deploy", "triage", "red", "tidy", "chores"} {
		threads[name] = f.waitAutoRoot("C1", name, 1).TS
	}
	alertRoot := f.waitAutoRoot(binAlerts, "alerts", 1)
	if alertRoot.ThreadTS != ts {
		t.Errorf("the alert's session is not in the alert's thread: %+v", alertRoot)
	}
	for name, th := range threads {
		f.waitFor(name+"'s session planned", func() bool { return len(f.msgs(th, render.ActionApproveAuto)) > 0 })
	}
	f.waitFor("the alert's session planned", func() bool { return planned(f.slack.Thread(binAlerts, ts)) })
	f.waitFor("h9's comment on the issue", func() bool { return len(gh.Written("acme/backend", issue)) > 0 })

	time.Sleep(2 * time.Second) // what a second start on the other replica would have posted by now
	for name, th := range threads {
		if n := len(f.autoRoots("C1", name)); n != 1 {
			t.Errorf("%d root messages of %s, want 1", n, name)
		}
		f.checkThread(th)
	}
	if n := len(f.autoRoots(binAlerts, "alerts")); n != 1 {
		t.Errorf("%d root messages of alerts, want 1", n)
	}
	checklists := 0
	for _, m := range f.slack.Thread(binAlerts, ts) {
		if m.BotID != "" && strings.Contains(string(m.Blocks), "h9_cl_title") {
			checklists++
		}
	}
	if checklists != 1 {
		t.Errorf("%d checklists in the alert's thread, want 1", checklists)
	}
	if c := gh.Written("acme/backend", issue); len(c) != 1 {
		t.Errorf("h9 commented %d times on the issue, want once: %+v", len(c), c)
	}
}

// planned: one of msgs carries the review's buttons.
func planned(msgs []fakeslack.Message) bool {
	for _, m := range msgs {
		if m.BotID != "" && strings.Contains(string(m.Blocks), render.ActionApproveAuto) {
			return true
		}
	}
	return false
}

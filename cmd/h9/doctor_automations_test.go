package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// h9 doctor says one line per automation, the operator's and a
// repository's (from h9's cache of it): a channel h9 is not in (where its
// sessions start, or the one a message trigger watches), a named
// repository that cannot be reached and a webhook secret that is not set
// are warnings; a schedule names its next occurrence.
func TestDoctorChecksAutomations(t *testing.T) {
	slack, _ := doctorEnv(t)
	testenv.Need(t, "git")
	remote := bareRepo(t)
	work := filepath.Join(t.TempDir(), "w")
	repoFile := "automations:\n  - name: hook\n    channel: C0AUTOS01\n    owner: U1\n    task: Look\n    on: {webhook: {secret_env: H9_TEST_DOCTOR_UNSET}}\n"
	for _, args := range [][]string{
		{"clone", "-q", remote, work},
		{"-C", work, "checkout", "-q", "main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(work, ".h9"), 0o755)
	os.WriteFile(filepath.Join(work, ".h9", "automations.yaml"), []byte(repoFile), 0o644)
	for _, args := range [][]string{
		{"-C", work, "add", "-A"},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "automations"},
		{"-C", work, "push", "-q", "origin", "main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dir := t.TempDir()
	repos := filepath.Join(dir, "repos.yml")
	os.WriteFile(repos, []byte("repos:\n  - name: backend\n    url: "+remote+"\n    channels: [C0AUTOS01]\n  - name: gone\n    url: http://127.0.0.1:1/missing.git\n"), 0o600)
	autos := filepath.Join(dir, "automations.yml")
	os.WriteFile(autos, []byte(`automations:
  - name: outside
    channel: C0NOTIN01
    owner: U1
    task: Tidy
    on: {schedule: "0 9 * * 1"}
  - name: alerts
    channel: C0NOTIN01
    owner: U1
    task: Look into the alert
    on: {message: {channel: C0ALERTS1, from: [B0ALERTS1], match: FIRING}}
  - name: tidy
    channel: C0AUTOS01
    owner: U1
    repo: backend
    task: Tidy up
    timezone: Europe/Paris
    on: {schedule: "0 9 * * 1"}
  - name: deploy
    channel: C0AUTOS01
    owner: U1
    repo: gone
    task: Look
    on: {webhook: {secret_env: H9_TEST_DOCTOR_HOOK}}
`), 0o600)
	t.Setenv("H9_REPOS_FILE", repos)
	t.Setenv("H9_AUTOMATIONS_FILE", autos)
	t.Setenv("H9_TEST_DOCTOR_HOOK", "s3cret")

	// h9 fetched backend once (as a session's start or the refresh does).
	cache, err := gitrepo.New(gitrepo.Config{Dir: filepath.Join(os.Getenv("H9_DATA_DIR"), reposDir),
		Repos: []gitrepo.Repo{{Name: "backend", URL: remote}}, Author: gitrepo.Identity{Name: "h9", Email: "h9@localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Fetch(context.Background(), "backend"); err != nil {
		t.Fatal(err)
	}
	cache.Close()

	slack.FailNext("conversations.history", "not_in_channel") // the first automation's channel
	slack.FailNext("conversations.history", "not_in_channel") // the channel the second one watches
	lines, _ := doctorLines(t)
	wantMark(t, lines, "automations", "⚠", "5 defined")
	wantMark(t, lines, "automations/alerts", "⚠", "h9 is not in <#C0NOTIN01>", "h9 is not in <#C0ALERTS1>")
	wantMark(t, lines, "automations/outside", "⚠", "h9 is not in <#C0NOTIN01>", "next Mon ", "09:00 UTC")
	wantMark(t, lines, "automations/tidy", "✓", "next Mon ", "09:00 CE", "h9 is in <#C0AUTOS01>", "backend is reachable")
	wantMark(t, lines, "automations/deploy", "⚠", "H9_TEST_DOCTOR_HOOK is set", "not reachable")
	wantMark(t, lines, "automations/backend/hook", "⚠", "H9_TEST_DOCTOR_UNSET is not set", "h9 is in <#C0AUTOS01>")
	if l := lines["automations/deploy"]; strings.Contains(l, "s3cret") {
		t.Errorf("doctor printed a webhook secret: %q", l)
	}
}

package bot

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/h9-app/h9/workspace/testenv"
)

// A webhook's root message shows its task rendered (values quoted); the
// same body re-signed is a duplicate answered with the thread's
// permalink; /h9 automations says the last session's state in the words
// /h9 status uses, and "active" or "paused".
func TestAutomationWordsRootListingAndDuplicate(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the bot")
	src := `automations:
  - name: deploy
    channel: ` + autoChannel + `
    owner: U1
    task: 'Deploy of {{.service}} failed'
    on:
      webhook: {secret_env: H9_TEST_HOOK_SECRET}
`
	e, srv := automationsEnv(t, src)
	e.model.Enqueue(planReplies("plan ready", "1:pending")...)
	body := []byte(`{"service":"api"}`)
	if code, answer := signedPost(t, srv.URL+"/hooks/deploy", body, time.Now(), hookSecret); code != http.StatusAccepted {
		t.Fatalf("signed delivery: %d %s", code, answer)
	}
	var root fakeslack.Message
	e.waitFor("the root message", func() bool {
		rs := rootsIn(e, autoChannel)
		if len(rs) == 1 {
			root = rs[0]
		}
		return len(rs) == 1
	})
	if shown := root.Text + string(root.Blocks); !strings.Contains(shown, `Deploy of \"api\" failed`) && !strings.Contains(shown, `Deploy of "api" failed`) || strings.Contains(shown, "{{.service}}") {
		t.Errorf("the root message does not show the task rendered: %s", shown)
	}
	// The same body, re-signed a minute later: the same event.
	code, answer := signedPost(t, srv.URL+"/hooks/deploy", body, time.Now().Add(time.Minute), hookSecret)
	if code != http.StatusOK || strings.Contains(answer, "slack://") || !strings.Contains(answer, strings.ReplaceAll(root.TS, ".", "")) {
		t.Errorf("re-signed duplicate: %d %s, want 200 with the thread's permalink", code, answer)
	}
	e.waitFor("the plan's review", func() bool {
		rec, err := e.bot.store.FindThread(e.ctx, autoChannel, root.TS)
		if err != nil {
			return false
		}
		s, err := decodeSession(rec)
		return err == nil && s.State == stateAwaitingReview
	})
	listing := func(want string) {
		t.Helper()
		before := len(e.slack.Ephemerals(autoChannel, "U1"))
		e.slash("U1", autoChannel, "automations")
		e.waitFor("the listing", func() bool { return len(e.slack.Ephemerals(autoChannel, "U1")) > before })
		got := e.slack.Ephemerals(autoChannel, "U1")[before].Text
		if !strings.Contains(got, want) {
			t.Errorf("listing %q lacks %q", got, want)
		}
	}
	listing("(awaiting review) · active")
	e.slash("U1", autoChannel, "automations pause deploy")
	e.waitFor("the pause", func() bool {
		for _, m := range rootsIn(e, autoChannel) {
			if strings.Contains(m.Text, "paused *deploy*") {
				return true
			}
		}
		return false
	})
	listing("(awaiting review) · *paused* by <@U1>")
}

// A repository that cannot be reached is a failed start before any root
// message: said once in the channel, and the third in a row pauses.
func TestAutomationUnreachableRepositoryFailsTheStart(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the bot")
	testenv.Need(t, "git")
	src := `automations:
  - name: tidy
    channel: ` + autoChannel + `
    owner: U1
    repo: gone
    task: Tidy up
    on:
      schedule: "0 9 * * 1"
`
	missing := filepath.Join(t.TempDir(), "missing.git")
	e, _ := automationsEnv(t, src, func(e *env) {
		e.repos = reposFor(t, t.TempDir(), gitrepo.Config{Repos: []gitrepo.Repo{{Name: "gone", URL: missing, Channels: []string{autoChannel}}}})
	})
	for i := range 3 {
		e.slash("U1", autoChannel, "automations run tidy")
		e.waitFor("failure "+strconv.Itoa(i+1), func() bool {
			n := 0
			for _, m := range e.slack.Ephemerals(autoChannel, "U1") {
				if strings.Contains(m.Text, "did not start") {
					n++
				}
			}
			return n > i
		})
	}
	e.waitFor("the pause", func() bool {
		for _, m := range rootsIn(e, autoChannel) {
			if strings.Contains(m.Text, "*tidy* is paused") {
				return true
			}
		}
		return false
	})
	said := 0
	for _, m := range rootsIn(e, autoChannel) {
		if strings.HasPrefix(m.Text, "Automation *tidy*") {
			t.Errorf("a session started on an unreachable repository: %q", m.Text)
		}
		if strings.HasPrefix(m.Text, "h9 could not start *tidy*: ") && strings.Contains(m.Text, "not reachable") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the cause was said %d times, want once", said)
	}
}

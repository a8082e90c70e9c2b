package bot

import (
	"errors"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// withRepo gives the session a repository; ready: its checkout and setup are done.
func withRepo(ready bool) func(*Session) {
	return func(s *Session) {
		s.Repo = &SessionRepo{Name: "backend", Branch: "h9/the-task-abc234", Ready: ready}
	}
}

// outcomeDue: the session is done and its repository outcome not yet made.
func outcomeDue(s *Session) { s.Outcome = &RepoOutcome{Text: "Fixed."} }

var repoRows = []row{
	{what: "/h9 plan [repo=…]: the checkout and setup come before the first run", from: Session{ID: "T1/C1/1.1"},
		ev: evCreate{owner: "U1", task: "fix it", mode: planning.PlanModePlan, repo: &SessionRepo{Name: "backend", Branch: "h9/fix-it-abc234"}},
		to: stateSettingUp, effects: []string{"log session created", "save for the run's gate", "post the checklist", "prepare the repository"},
		check: func(t *testing.T, s Session) {
			if s.Repo == nil || s.Repo.Ready || s.Request != (agent.Request{Intent: agent.IntentTask, Text: "fix it"}) {
				t.Errorf("session = %+v, repo %+v", s, s.Repo)
			}
		}},
	{what: "set up: the first request runs, the base remembered", from: sess(stateSettingUp, planMode, withRepo(false)),
		ev: evPrepared{base: "main"}, to: statePlanning, effects: []string{"save", "start task (plan) the task"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "ready", s.Repo.Ready, true)
			wantString(t, "base", s.Repo.Base, "main")
		}},
	{what: "set up from the cache alone: the warning goes to the thread first", from: sess(stateSettingUp, withRepo(false)),
		ev: evPrepared{base: "main", warning: "could not fetch"}, to: stateRunning,
		effects: []string{notice(":warning: could not fetch"), "save", "start task (default) the task"}},
	{what: "the setup command failed: its words and Retry", from: sess(stateSettingUp, withRepo(false)),
		ev: evPrepared{base: "main", setup: &setupFailure{what: "the setup command `make` of backend exited with code 2", output: "make: *** no rule"}},
		to: stateSetupFailed, effects: []string{"log setup failed", "post h9_setup_failed", "save", "refresh"},
		check: func(t *testing.T, s Session) { wantBool(t, "ready", s.Repo.Ready, false) }},
	{what: "the checkout failed: the error and Retry", from: sess(stateSettingUp, withRepo(false)),
		ev: evPrepared{err: errors.New("no such branch")}, to: stateSetupFailed,
		effects: []string{"log preparing the repository failed", "post h9_setup_failed", "save", "refresh"}},
	{what: "h9 stopping mid-setup sets up again at the next start", from: sess(stateSettingUp, withRepo(false)),
		ev: evPrepared{stopping: true}, to: stateSettingUp, effects: []string{"save", "refresh"}},
	{what: "Stop during setup cancels it", from: sess(stateSettingUp, withRepo(false)),
		ev: click(render.ActionStop), to: stateSettingUp, effects: []string{"log stop requested", "cancel the run", "save"}},
	{what: "stopped during setup: it rests, still to set up", from: sess(stateSettingUp, withRepo(false), stoppedBy("U2")),
		ev: evPrepared{err: errors.New("cancelled")}, to: stateIdle, effects: []string{notice(stoppedWords), "save", "refresh"},
		check: func(t *testing.T, s Session) { wantBool(t, "ready", s.Repo.Ready, false) }},
	{what: "a reply during setup waits", from: sess(stateSettingUp, withRepo(false)),
		ev: evReply{user: "U1", text: "also b", ts: "1.9"}, to: stateSettingUp,
		effects: []string{"save", "react 1.9 hourglass_flowing_sand"}},
	{what: "a restart mid-setup sets up again, then the same first request", from: sess(stateSettingUp, withRepo(false)),
		ev: evRecover{}, to: stateSettingUp,
		effects: []string{"log setting up again after a restart", notice(restartNotice), "save", "refresh", "prepare the repository"},
		check: func(t *testing.T, s Session) {
			wantString(t, "request", s.Request.Text, "the task")
		}},
	{what: "Retry after a failed setup sets up again", from: sess(stateSetupFailed, withRepo(false)),
		ev: click(render.ActionRetry), to: stateSettingUp, effects: []string{"save", "refresh", "prepare the repository"}},
	{what: "a reply after a failed setup waits for a new setup and the first request", from: sess(stateSetupFailed, withRepo(false)),
		ev: evReply{user: "U1", text: "try again", ts: "1.9"}, to: stateSettingUp,
		effects: []string{"react 1.9 hourglass_flowing_sand", "save", "refresh", "prepare the repository"},
		check: func(t *testing.T, s Session) {
			wantInt(t, "queue", len(s.Queue), 1)
			wantString(t, "request", s.Request.Text, "the task")
		}},
	{what: "a reply to a session stopped before its setup sets up first", from: sess(stateIdle, withRepo(false)),
		ev: evReply{user: "U1", text: "go", ts: "1.9"}, to: stateSettingUp,
		effects: []string{"react 1.9 hourglass_flowing_sand", "save", "refresh", "prepare the repository"}},
	{what: "done with a repository: the outcome with the changes", from: sess(stateRunning, autoRun, withRepo(true)),
		ev: evRunDone{text: "Fixed.", todos: items(completed)}, to: stateDone,
		effects: []string{"show 1/1 tasks", "forget the step", "save", "refresh", "flush the checklist", "post the outcome with the changes"},
		check:   func(t *testing.T, s Session) { wantString(t, "outcome due", s.Outcome.Text, "Fixed.") }},
	{what: "the outcome made: its messages and the diff's upload become pending posts", from: sess(stateDone, withRepo(true), outcomeDue),
		ev: evOutcome{msgs: []render.Message{text("the changes")}, diff: "h9-the-task-abc234.diff"}, to: stateDone,
		effects: []string{notice("the changes"), `post diff "h9-the-task-abc234.diff"`, "save"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "outcome due", s.Outcome != nil, false)
			wantPosts(t, s, "notice-1", "diff-2")
			wantBool(t, "active", s.active(), true)
		}},
	{what: "an outcome already made is not made twice", from: sess(stateDone, withRepo(true)),
		ev: evOutcome{msgs: []render.Message{text("the changes")}}, to: stateDone},
	{what: "a restart makes an outcome still due", from: sess(stateDone, withRepo(true), outcomeDue),
		ev: evRecover{}, to: stateDone, effects: []string{"post the outcome with the changes"}},
	{what: "a push's result is said in the thread, and the pull request kept", from: sess(stateDone, withRepo(true)),
		ev: evPushed{msg: text("Opened it"), url: "https://github.com/acme/backend/pull/7"}, to: stateDone,
		effects: []string{"save", notice("Opened it")},
		check: func(t *testing.T, s Session) {
			wantString(t, "pull request", s.Repo.PullRequest, "https://github.com/acme/backend/pull/7")
		}},
	{what: "Push branch pushes", from: sess(stateDone, withRepo(true)),
		ev: click(render.ActionPushBranch), to: stateDone, effects: []string{"log repository action", "push the branch"}},
	{what: "Open pull request pushes and opens it", from: sess(stateDone, withRepo(true)),
		ev: click(render.ActionOpenPR), to: stateDone, effects: []string{"log repository action", "push and open the pull request"}},
	{what: "Push branch during a follow-up pushes what is committed", from: sess(stateRunning, withRepo(true)),
		ev: click(render.ActionPushBranch), to: stateRunning, effects: []string{"log repository action", "push the branch"}},
	{what: "no checkout, nothing to push", from: sess(stateIdle, withRepo(false)),
		ev: click(render.ActionOpenPR), to: stateIdle,
		effects: []string{"ephemeral to U1: This session has no repository checkout, so there is nothing to push."}},
	{what: "the pull request's URL is kept", from: sess(stateDone, withRepo(true)),
		ev: evPullRequest{url: "https://github.com/acme/backend/pull/7"}, to: stateDone, effects: []string{"save"},
		check: func(t *testing.T, s Session) {
			wantString(t, "pull request", s.Repo.PullRequest, "https://github.com/acme/backend/pull/7")
		}},
}

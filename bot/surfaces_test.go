package bot

import (
	"slices"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
	"github.com/h9-app/h9/workspace/testenv"
)

const methodSetStatus = "agents.sessions.setStatus"

// waitStatuses waits until the thread's agent session has shown want, in
// order, each change once, and checks that h9 set the status once per
// change: a setStatus, or a chat.stopStream's session_status.
func (e *env) waitStatuses(thread string, want ...string) {
	e.t.Helper()
	e.waitFor("statuses "+strings.Join(want, " → "), func() bool {
		return slices.Equal(e.slack.StatusSequence(testChannel, thread), want)
	})
	a, _ := e.slack.AgentSession(testChannel, thread)
	if n := len(a.History); n != len(want) {
		e.t.Errorf("the status was set %d times for %d changes of status: %v", n, len(want), a.History)
	}
}

// A planned, approved session: processing while it plans, suspended at the
// review, processing through auto-run's runs, active when done; the title
// is the task and the initiator its owner.
func TestSurfacesStatusOfPlannedApprovedSession(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	thread, review := e.planned("build the thing", "a:pending", "b:pending")
	e.waitStatuses(thread, "processing", "suspended")
	a, _ := e.slack.AgentSession(testChannel, thread)
	if a.Title != "build the thing" || a.Initiator != testUser {
		t.Errorf("session title %q, initiator %q", a.Title, a.Initiator)
	}

	e.model.Enqueue(
		worked("a:completed", "b:in_progress"),
		worked("a:completed", "b:completed"),
		fakemodel.Text("Built a and b."),
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitMessage(thread, "Built a and b.", 1)
	e.waitChecklist(thread, "2/2 tasks", "done")
	e.waitStatuses(thread, "processing", "suspended", "processing", "active")

	// A restart loads the session: the status it last told is recorded, so
	// nothing is told again.
	e.restart()
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, thread, "status"); err != nil { // loads the session
		t.Fatal(err)
	}
	e.waitFor("the status answer", func() bool { return len(e.slack.Ephemerals(testChannel, testUser)) > 0 })
	e.waitStatuses(thread, "processing", "suspended", "processing", "active")
}

// Cancel at the review closes the agent session.
func TestSurfacesCancelCloses(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	thread, review := e.planned("maybe later", "a:pending")
	e.click(testUser, review.TS, render.ActionCancel)
	e.waitChecklist(thread, "cancelled")
	e.waitStatuses(thread, "processing", "suspended", "closed")
}

// Slack's Stop from the owner stops the run as h9's Stop does, and the
// status moves to the one the session is then in; from anyone else it is
// refused privately and the run goes on.
func TestSurfacesNativeStop(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	replies := gate(t, e)
	thread := e.startSession("run", "a long job")
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })
	e.waitStatuses(thread, "processing")

	if _, err := e.slack.PressStop(e.ctx, "U2", testChannel, thread); err != nil {
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, "U2", "can stop it, so it goes on")
	replies <- fakemodel.ToolCall("todo_write", todos("a:in_progress"))
	e.waitFor("the run's second model request", func() bool { return e.model.Calls() == 2 })
	if len(e.botMessages(thread, "Stopped by")) != 0 {
		t.Fatal("someone else's Stop stopped the run")
	}

	if _, err := e.slack.PressStop(e.ctx, testUser, testChannel, thread); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, "Stopped by <@"+testUser+">", 1)
	e.waitChecklist(thread, "idle")
	e.waitStatuses(thread, "processing", "active")
	if _, err := e.slack.PressStop(e.ctx, testUser, testChannel, thread); err == nil {
		t.Error("Slack still shows Stop on a session that rests")
	}
}

// Every surface refused: each method is tried at most once, and the
// thread is what it always was: the checklist and the review's four
// buttons with their words.
func TestSurfacesFallBackWhenRefused(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := prepareEnv(t, t.TempDir())
	for _, m := range []string{methodSetStatus, "agents.sessions.rename", "chat.startStream", "chat.appendStream", "chat.stopStream"} {
		e.slack.Refuse(m, "not_authorized")
	}
	e.start()
	thread, review := e.planned("build the thing", "a:pending", "b:pending")
	for _, label := range []string{"Approve & auto-run", "Approve & confirm each step", "Keep planning", "Cancel"} {
		if !strings.Contains(blocksText(review), label) {
			t.Errorf("review lacks %q", label)
		}
	}
	e.model.Enqueue(worked("a:completed", "b:in_progress"), worked("a:completed", "b:completed"), fakemodel.Text("Built a and b."))
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitMessage(thread, "Built a and b.", 1)
	e.waitChecklist(thread, "2/2 tasks", "done")
	if n := len(e.slack.Calls(methodSetStatus)); n != 1 {
		t.Errorf("%d setStatus calls after Slack refused the first, want 1", n)
	}
	if _, found := e.slack.AgentSession(testChannel, thread); found {
		t.Error("an agent session exists though Slack refused every call")
	}
	if n := len(e.botMessages(thread, "h9_cl_title")); n != 1 {
		t.Errorf("%d checklists, want 1", n)
	}
}

// The session's title: the task on one line, cut at a word boundary.
func TestSessionTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60)
	for _, tt := range []struct{ task, want string }{
		{"fix  the\nbuild", "fix the build"},
		{automation.Request("Fix the flaky test", automation.DataWebhook, `{"a": 1}`), "Fix the flaky test"},
		{long, strings.TrimSpace(strings.Repeat("word ", 39)) + "…"},
	} {
		got := sessionTitle(tt.task)
		if got != tt.want || len([]rune(got)) > maxSessionTitle {
			t.Errorf("sessionTitle(%.20q…) = %q (%d), want %q", tt.task, got, len([]rune(got)), tt.want)
		}
	}
}

// A step waiting for confirmation suspends the session, so Slack shows no
// Stop there; h9's own Stop still works and the session rests active.
func TestSurfacesConfirmEachStepSuspends(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	thread, review := e.planned("careful work", "a:pending")
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"careful.txt","content":"x"}`),
	)
	e.click(testUser, review.TS, render.ActionApproveConfirm)
	e.waitMessage(thread, render.ActionStepApprove, 1)
	e.waitStatuses(thread, "processing", "suspended", "processing", "suspended")
	if _, err := e.slack.PressStop(e.ctx, testUser, testChannel, thread); err == nil {
		t.Error("Slack shows Stop on a suspended session")
	}
	cl := e.waitChecklist(thread, "awaiting approval", render.ActionStop)
	e.click(testUser, cl.TS, render.ActionStop)
	e.waitChecklist(thread, "idle")
	e.waitStatuses(thread, "processing", "suspended", "processing", "suspended", "active")
}

// An automation's session: its title is the operator's task, not the
// fenced data after it; with no owner it streams to no one (Slack needs a
// recipient in a channel), so its words are posted as always, and the
// stream surface stays on for every other session.
func TestSurfacesAutomationWithoutOwner(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("Tidied the flaky tests."))
	task := "Fix the flaky test"
	started, err := automationSide{e.bot}.StartSession(t.Context(), automation.StartRequest{
		Automation: "flaky", Key: "webhook:1", Channel: testChannel, Mode: automation.ModeRun, Task: task,
		Request: automation.Request(task, automation.DataWebhook, `{"test":"TestFlaky"}`), Source: "webhook", Trigger: automation.KindWebhook,
	})
	if err != nil {
		t.Fatal(err)
	}
	thread := started.Thread
	e.waitMessage(thread, "Tidied the flaky tests.", 1)
	e.waitStatuses(thread, "processing", "active")
	if a, _ := e.slack.AgentSession(testChannel, thread); a.Title != task || a.Initiator != "" {
		t.Errorf("session title %q, initiator %q; want %q and none", a.Title, a.Initiator, task)
	}
	if n := len(e.slack.Calls("chat.startStream")); n != 0 {
		t.Errorf("%d chat.startStream calls for a session with no owner, want 0", n)
	}
	if !e.bot.api.SurfaceOn(slackapi.SurfaceStream) {
		t.Error("a session with no owner turned streaming off")
	}
}

// A session with no owner is the admins' alone: the refusal names no one.
func TestControlRefusalWithoutOwner(t *testing.T) {
	t.Parallel()
	for _, action := range []string{actionNativeStop, render.ActionStop} {
		got := controlRefusal(action, "")
		if strings.Contains(got, "<@") || !strings.HasPrefix(got, "Only an h9 admin can ") {
			t.Errorf("controlRefusal(%q, no owner) = %q", action, got)
		}
		if got := controlRefusal(action, "U1"); !strings.HasPrefix(got, "Only <@U1>, who started this session, or an h9 admin can ") {
			t.Errorf("controlRefusal(%q, U1) = %q", action, got)
		}
	}
}

// The five waits on a person suspend the session; a run in flight is
// processing even with a press outstanding, since the run goes on without
// it (an Allow host the proxy asked for, feedback that came during the
// run); a confirm-each-step wait blocks the run and so suspends it.
func TestAgentStatusOfEachWait(t *testing.T) {
	t.Parallel()
	ask := &SessionNetwork{Asks: []NetworkAsk{{HostPort: "blocked.test:80"}}}
	waiting := &follow.Follow{Batch: &follow.Batch{Status: follow.Waiting}}
	for _, tt := range []struct {
		name string
		s    Session
		want string
	}{
		{"review", Session{State: stateAwaitingReview}, "suspended"},
		{"confirm each step", Session{State: stateAwaitingApproval}, "suspended"},
		{"Allow host at rest", Session{State: stateDone, Network: ask}, "suspended"},
		{"Allow host during a run", Session{State: stateRunning, Network: ask}, "processing"},
		{"Raise budget", Session{State: stateOverBudget}, "suspended"},
		{"Address feedback", Session{State: stateDone, Follow: waiting}, "suspended"},
		{"Address feedback during a run", Session{State: stateRunning, Follow: waiting}, "processing"},
		{"Resume after a restart", Session{State: stateInterrupted}, "suspended"},
		{"running", Session{State: stateRunning}, "processing"},
		{"done", Session{State: stateDone}, "active"},
		{"stalled", Session{State: stateStalled}, "active"},
		{"cancelled", Session{State: stateCancelled}, "closed"},
		{"following ended", Session{State: stateDone, Follow: &follow.Follow{Ended: "merged"}}, "closed"},
	} {
		if got := tt.s.agentStatus(); got != tt.want {
			t.Errorf("%s: agentStatus = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Allow host: the proxy's refusal does not block the run (the command
// fails, the model reads why), so the session stays processing; once the
// run ends with the ask open it waits on a person, suspended; Deny leaves
// it resting, active. One call per change.
func TestSurfacesAllowHostSuspendsOnlyAtRest(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	replies := gate(t, e)
	thread := e.startSession("run", "fetch a thing")
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })
	e.waitStatuses(thread, "processing")
	e.bot.NetworkRefused(e.sessionID(thread), "curl", "blocked.test:80")
	ask := e.networkAsk(thread, "blocked.test:80")
	replies <- fakemodel.ToolCall("todo_write", todos("a:completed"))
	e.waitFor("the run's second model request", func() bool { return e.model.Calls() == 2 })
	e.waitStatuses(thread, "processing")
	replies <- fakemodel.Text("Could not fetch it.")
	e.waitMessage(thread, "Could not fetch it.", 1)
	e.waitStatuses(thread, "processing", "suspended")
	e.click(testUser, ask.TS, render.ActionNetDeny)
	e.waitFor("the ask decided", func() bool {
		m, _ := e.slack.Message(testChannel, ask.TS)
		return strings.Contains(m.Text, "Denied by <@"+testUser+">")
	})
	e.waitStatuses(thread, "processing", "suspended", "active")
}

// Confirm each step: the run blocks on the step's buttons, suspended, and
// is processing again once the step is approved.
func TestSurfacesConfirmEachStepResumesProcessing(t *testing.T) {
	testenv.Full(t, "a whole Slack flow")
	e := newEnv(t)
	thread, review := e.planned("careful work", "a:pending")
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("write_file", `{"path":"careful.txt","content":"x"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.Text("Wrote it."),
	)
	e.click(testUser, review.TS, render.ActionApproveConfirm)
	step := e.waitMessage(thread, render.ActionStepApprove, 1)
	e.waitStatuses(thread, "processing", "suspended", "processing", "suspended")
	e.click(testUser, step.TS, render.ActionStepApprove)
	e.waitMessage(thread, "Wrote it.", 1)
	e.waitStatuses(thread, "processing", "suspended", "processing", "suspended", "processing", "active")
}

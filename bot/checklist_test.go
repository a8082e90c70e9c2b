package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/testenv"
)

// A burst of 100 snapshots costs a couple of chat.update calls at the
// default 1s interval, and the last snapshot is what Slack shows.
func TestChecklistCoalescesBursts(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	fs := fakeslack.New(fakeslack.Options{})
	defer fs.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	api := slackapi.New("xoxb-test", "", fs.APIURL(), log, nil)
	api.EditBudget = editsPerInterval
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first := render.Checklist{SessionID: "T1/C1/1.1", Task: "burst", State: string(stateRunning), Running: true}
	ts, err := api.PostMessage(ctx, log, "C1", "", render.RenderChecklist(first))
	if err != nil {
		t.Fatal(err)
	}
	idle := make(chan struct{}, 1)
	c := &checklist{ctx: context.Background(), api: api, log: log, tasks: newTasks(), channel: "C1", ts: ts, interval: defaultCoalesceInterval,
		onIdle: func() { idle <- struct{}{} }, cur: first, lastSent: time.Now()}

	const n = 100
	items := make([]planning.TodoItem, n)
	for i := range items {
		items[i] = planning.TodoItem{ID: fmt.Sprint(i), Content: fmt.Sprint("step ", i), Status: planning.TodoPending}
	}
	for i := range n {
		items[i].Status = planning.TodoCompleted
		snap := append([]planning.TodoItem(nil), items...)
		c.set(func(cl *render.Checklist) { cl.Todos = snap })
	}
	c.set(func(cl *render.Checklist) { cl.State, cl.Running = string(stateDone), false })
	select {
	case <-idle:
	case <-ctx.Done():
		t.Fatal("checklist never flushed")
	}
	updates := len(fs.Calls("chat.update"))
	if updates < 1 || updates > 4 {
		t.Errorf("%d chat.update calls for %d snapshots, want 1..4", updates, n)
	}
	m, _ := fs.Message("C1", ts)
	if !strings.Contains(m.Text, "100/100 tasks") || !strings.Contains(m.Text, "done") {
		t.Errorf("final state did not land: %q", m.Text)
	}
	t.Logf("%d updates for %d snapshots (%.3f per snapshot)", updates, n, float64(updates)/n)
}

// Slack's 429 on chat.update is waited out and the final checklist state
// lands: both 429s were served, and an update succeeded after them, no
// sooner than their Retry-After said.
func TestRateLimitedUpdatesStillLand(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.slack.RateLimit("chat.update", 2, time.Second)
	thread, _ := e.planned("rate limited", "a:pending", "b:pending")
	e.waitChecklist(thread, "0/2 tasks", "awaiting review")
	var limited []time.Time
	var landed bool
	for _, c := range e.slack.Calls("chat.update") {
		switch {
		case c.Status == http.StatusTooManyRequests:
			limited = append(limited, c.At)
		case len(limited) > 0 && c.Status == http.StatusOK && c.SlackError == "":
			landed = landed || c.At.Sub(limited[len(limited)-1]) >= time.Second
		}
	}
	if len(limited) != 2 {
		t.Fatalf("%d chat.update calls answered 429, want the 2 scheduled: the test did not play the rate limit", len(limited))
	}
	if !landed {
		t.Error("no chat.update landed a Retry-After after the last 429")
	}
}

// A model failure is posted with Retry; Retry runs the same prompt again.
func TestModelFailureOffersRetry(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.ServerError())
	thread := e.startSession("plan", "flaky model")
	failure := e.waitMessage(thread, render.ActionRetry, 1)
	e.waitChecklist(thread, "error")

	e.model.Enqueue(planReplies("Plan after retry.", "a:pending")...)
	e.click(testUser, failure.TS, render.ActionRetry)
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	if got := e.lastUserMessage(-1); !strings.Contains(got, "flaky model") {
		t.Errorf("retry ran %q, want the task again", got)
	}
}

// When the first checklist post fails (Slack errors past the retries), the
// next change posts it: one checklist, showing the latest state, kept
// across the session's later edits.
func TestChecklistPostedLaterAfterFailedFirstPost(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	for range slackapi.MaxTransientRetries + 1 {
		e.slack.FailNext("chat.postMessage", "internal_error")
	}
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	thread, err := e.slack.Mention(e.ctx, testUser, testChannel, "", "plan despite slack")
	if err != nil {
		t.Fatal(err)
	}
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.waitChecklist(thread, "0/1 tasks", "awaiting review")

	e.model.Enqueue(worked("a:completed"), fakemodel.Text("All done."))
	e.click(testUser, review.TS, render.ActionApproveAuto)
	e.waitMessage(thread, "All done.", 1)
	e.waitChecklist(thread, "1/1 tasks", "done")
}

// The first run does not wait for the checklist's post. When that post is
// slow (rate limited) and the run's todos and replies come first, the
// thread still gets exactly one checklist, as its first reply, ending in
// the latest state.
func TestSlowFirstChecklistPostStaysOneAndFirst(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.slack.RateLimit("chat.postMessage", 1, time.Second)
	e.model.Enqueue(planReplies("Plan.", "a:pending", "b:pending")...)
	thread, err := e.slack.Mention(e.ctx, testUser, testChannel, "", "plan while slack is slow")
	if err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.waitChecklist(thread, "0/2 tasks", "awaiting review")
	bot := e.botMessages(thread, "")
	if len(bot) == 0 {
		t.Fatal("no bot replies in the thread")
	}
	if !strings.Contains(string(bot[0].Blocks), "h9_cl_title") {
		t.Fatalf("the thread's first bot reply is %q, want the checklist", bot[0].Text)
	}
	e.checklist(thread) // exactly one
}

// Up to editsPerInterval checklists editing at once each get an edit per
// interval; past that the spacing grows with their number, so the edits
// of all of them together stay at editsPerInterval per interval.
func TestEditSpacingGrowsPastTheBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		editing int64
		want    time.Duration
	}{
		{0, time.Second}, {1, time.Second}, {editsPerInterval, time.Second},
		{2 * editsPerInterval, 2 * time.Second}, {10 * editsPerInterval, 10 * time.Second},
		{editsPerInterval + editsPerInterval/2, 1500 * time.Millisecond},
	} {
		if got := editSpacing(time.Second, tc.editing, editsPerInterval); got != tc.want {
			t.Errorf("editSpacing(1s, %d) = %v, want %v", tc.editing, got, tc.want)
		}
	}
}

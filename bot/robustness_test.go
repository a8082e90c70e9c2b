package bot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// A mention arrives as app_mention AND message; a redelivered envelope and a
// repeated event_id arrive again: each is handled once.
func TestDuplicateDeliveriesRunOnce(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	root, err := e.slack.Mention(e.ctx, testUser, testChannel, "", "add a health check")
	if err != nil {
		t.Fatal(err)
	}
	review := e.waitMessage(root, render.ActionApproveAuto, 1)
	if n := len(e.botMessages(root, "h9_cl_title")); n != 1 {
		t.Errorf("%d checklists for one mention", n)
	}
	if got := e.lastUserMessage(0); !strings.Contains(got, "add a health check") || strings.Contains(got, "<@") {
		t.Errorf("mention task = %q", got)
	}

	// The same thread reply three times: one envelope redelivered, one event id repeated.
	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
	inner := map[string]any{"type": "message", "user": testUser, "text": "also b", "channel": testChannel,
		"ts": "1800000000.000001", "thread_ts": root, "channel_type": "channel"}
	ack, err := e.slack.SendEvent(e.ctx, "EvDup1", inner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.slack.Redeliver(e.ctx, ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.slack.SendEvent(e.ctx, "EvDup1", inner); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the revised review", func() bool {
		for _, m := range e.botMessages(root, render.ActionApproveAuto) {
			if m.TS != review.TS {
				return true
			}
		}
		return false
	})
	// "@h9 status" goes through the same session inbox, after the duplicates.
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, root, "status"); err != nil {
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, testUser, "add a health check")
	if got := e.model.Calls(); got != 4 {
		t.Errorf("model calls = %d, want 4 (each plan once)", got)
	}
}

// The bot ignores its own posts, edits and other subtypes.
func TestIgnoresBotMessagesAndEdits(t *testing.T) {
	e := newEnv(t)
	thread, _ := e.planned("ignore noise", "a:pending")
	calls := e.model.Calls()
	for i, inner := range []map[string]any{
		{"type": "message", "bot_id": "BBOT", "text": "echo", "channel": testChannel, "ts": "1.1", "thread_ts": thread},
		{"type": "message", "user": "UBOT", "text": "own", "channel": testChannel, "ts": "1.2", "thread_ts": thread},
		{"type": "message", "subtype": "message_changed", "channel": testChannel, "ts": "1.3",
			"message": map[string]any{"user": testUser, "text": "edited", "ts": "1.0", "thread_ts": thread}},
		{"type": "message", "subtype": "channel_join", "user": testUser, "text": "joined", "channel": testChannel, "ts": "1.4", "thread_ts": thread},
	} {
		if _, err := e.slack.SendEvent(e.ctx, fmt.Sprintf("EvNoise%d", i), inner); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, thread, "status"); err != nil {
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, testUser, "ignore noise")
	e.waitEphemeral(testChannel, testUser, "This thread's h9 session")
	if e.model.Calls() != calls {
		t.Errorf("noise started a run: %d calls, want %d", e.model.Calls(), calls)
	}
}

// A 200-todo plan with long, hostile contents renders within Slack's limits
// (checked on every payload at cleanup) and mentions stay escaped.
func TestTwoHundredTodoPlanWithinLimits(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	type item struct {
		ID      string `json:"id"`
		Content string `json:"content"`
		Status  string `json:"status"`
	}
	var items []item
	for i := range 200 {
		items = append(items, item{ID: fmt.Sprint("t", i), Status: "pending",
			Content: fmt.Sprintf("<!channel> step %d <@U999> %s", i, strings.Repeat("long words ", 40))})
	}
	args, _ := json.Marshal(map[string]any{"todos": items})
	e.model.Enqueue(fakemodel.ToolCall("todo_write", string(args)), fakemodel.Text("<!here> "+strings.Repeat("summary ", 3000)))
	thread := e.startSession("plan", "<!channel> huge")
	e.waitMessage(thread, render.ActionApproveAuto, 1)
	// "awaiting review" too: while planning, the activity line may read "todo_write: 0/200 tasks".
	cl := e.waitChecklist(thread, "0/200 tasks", "awaiting review")
	for _, call := range e.slack.Calls("") {
		all := call.Params["text"] + call.Params["blocks"]
		if strings.Contains(all, "<!channel>") || strings.Contains(all, "<!here>") || strings.Contains(all, "<@U999>") {
			t.Errorf("%s sent an unescaped mention", call.Method)
		}
	}
	if !strings.Contains(string(cl.Blocks), "more") {
		t.Error("a 200-todo checklist does not say how many are hidden")
	}
}

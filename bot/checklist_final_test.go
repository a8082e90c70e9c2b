package bot

import (
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// When a run ends for good, the checklist's last edit (the final state, no
// Stop button, no Now: line) lands before the outcome is posted: nobody
// reads "Done" under a checklist that still says running. The order is
// Slack's own record of the calls, not a clock.
func TestChecklistShowsTheEndBeforeTheOutcome(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:in_progress")),
		worked("a:completed", "b:completed"),
		fakemodel.Text("Built both."),
	)
	thread := e.startSession("run", "build both")
	e.waitMessage(thread, "Done:", 1)
	ts := e.checklist(thread).TS
	var last string // the checklist as its last edit before the outcome left it
	for _, c := range e.slack.Calls("") {
		if c.Method == "chat.postMessage" && strings.HasPrefix(c.Params["text"], "Done:") {
			break
		}
		if c.Method == "chat.update" && c.Params["ts"] == ts {
			last = c.Params["blocks"]
		}
	}
	if !strings.Contains(last, "2/2 tasks") || !strings.Contains(last, "*State:* done") {
		t.Errorf("before the outcome, the checklist did not show the session done: %s", last)
	}
	if strings.Contains(last, render.ActionStop) || strings.Contains(last, "Now:") {
		t.Errorf("before the outcome, the checklist still showed the run going on: %s", last)
	}
}

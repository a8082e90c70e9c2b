package bot

import (
	"regexp"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// nowLineRE is the Now: line while a command runs, with its clock.
var nowLineRE = regexp.MustCompile("\\*Now:\\* `bash: sleep 4` · ([1-9])s")

// While a command runs, the checklist's Now: line names it and counts the
// seconds it has run, redrawn while it lasts; once the run ends the line
// is gone.
func TestNowLineShowsTheRunningCommandAndItsTime(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	e := newEnv(t)
	e.model.Enqueue(fakemodel.ToolCall("todo_write", todos("a:pending")), fakemodel.Text("Plan: wait a little."))
	thread := e.startSession("plan", "wait")
	review := e.waitMessage(thread, render.ActionApproveAuto, 1)
	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress")),
		fakemodel.ToolCall("bash", `{"command":"sleep 4"}`),
		fakemodel.ToolCall("todo_write", todos("a:completed")),
		fakemodel.Text("Waited."),
	)
	e.click(testUser, review.TS, render.ActionApproveAuto)
	seen := map[string]bool{}
	e.waitFor("the Now: line's clock to move", func() bool {
		for _, m := range e.botMessages(thread, "h9_cl_title") {
			if sub := nowLineRE.FindStringSubmatch(string(m.Blocks)); sub != nil {
				seen[sub[1]] = true
			}
		}
		return len(seen) >= 2
	})
	e.waitMessage(thread, "Waited.", 1)
	m := e.waitChecklist(thread, "1/1 tasks", "done")
	if strings.Contains(string(m.Blocks), "Now:") {
		t.Errorf("the Now: line outlived the run: %s", m.Blocks)
	}
}

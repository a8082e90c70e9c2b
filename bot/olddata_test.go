package bot

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// oldDataDir is a data directory written by h9 before the storage seams
// (schema 1), with the fake Slack's messages of that moment.
const oldDataDir = "../agent/store/boltstore/testdata/v1"

// openOldDataDir copies the schema 1 h9.db into a new data directory and
// gives the fake Slack that run's messages; the bot is not started yet.
func openOldDataDir(t *testing.T) (*env, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, filepath.Join(oldDataDir, "h9.db"), filepath.Join(dir, "h9.db"))
	raw, err := os.ReadFile(filepath.Join(oldDataDir, "slack.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved struct {
		Threads  map[string]string
		Messages []fakeslack.Message
	}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	e := prepareEnv(t, dir)
	e.slack.Restore(saved.Messages)
	return e, saved.Threads
}

// A data directory from before the storage seams opens: /h9 status lists
// its sessions, the auto-run cut by the shutdown resumes, the pending step
// is reported interrupted, and the old review and Retry buttons work.
func TestOldDataDirectory(t *testing.T) {
	e, threads := openOldDataDir(t)
	e.model.Enqueue(
		worked("a:completed", "b:completed"),
		fakemodel.Text("Finished after the upgrade."),
	)
	e.start()

	ar := threads["autorun"]
	e.waitMessage(ar, restartNotice, 1)
	e.waitMessage(ar, "Finished after the upgrade.", 1)
	e.waitChecklist(ar, "2/2 tasks", "done") // the old checklist, edited: exactly one
	if got := e.lastUserMessage(0); got != agent.ContinuePrompt {
		t.Errorf("the auto-run resumed with %q, want the continue prompt", got)
	}
	if first := e.model.Requests()[0].Messages[1]; first.Content != "fixture auto-run" {
		t.Errorf("the resumed run lost its history: first message %q", first.Content)
	}
	e.waitMessage(threads["approval"], "Interrupted", 1)
	e.waitChecklist(threads["approval"], "interrupted")

	e.slash(testUser, testChannel, "status")
	for _, want := range []string{"fixture done* · done · 2/2 tasks", "fixture review* · awaiting review · 0/2 tasks",
		"fixture approval* · interrupted · 0/1 tasks", "fixture stall* · stalled · 0/2 tasks",
		"fixture failure* · error · 0/0 tasks", "fixture auto-run* · done · 2/2 tasks"} {
		e.waitEphemeral(testChannel, testUser, want)
	}

	e.model.Enqueue(fakemodel.Text("Recovered."))
	e.click(testUser, e.waitMessage(threads["failed"], render.ActionRetry, 1).TS, render.ActionRetry)
	e.waitMessage(threads["failed"], "Recovered.", 1)
	if got := e.lastUserMessage(-1); got != "fixture failure" {
		t.Errorf("Retry of a schema 1 session ran %q, want its task", got)
	}

	e.model.Enqueue(
		fakemodel.ToolCall("todo_write", todos("a:in_progress", "b:pending")),
		worked("a:completed", "b:in_progress"),
		worked("a:completed", "b:completed"),
		fakemodel.Text("Reviewed and built."))
	e.click(testUser, e.waitMessage(threads["review"], render.ActionApproveAuto, 1).TS, render.ActionApproveConfirm)
	first := e.nextStep(threads["review"], "") // each todo's work is a step to confirm
	e.click(testUser, first.TS, render.ActionStepApprove)
	e.click(testUser, e.nextStep(threads["review"], first.TS).TS, render.ActionStepApprove)
	e.waitMessage(threads["review"], "Reviewed and built.", 1)
	e.waitChecklist(threads["review"], "confirm-each-step", "2/2 tasks", "done")
	if got := e.lastUserMessage(-1); got != agent.ExecPrompt {
		t.Errorf("the old review's approval ran %q, want the exec prompt", got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

package bot

import (
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// gate makes every model request wait for a reply sent by the test.
func gate(t *testing.T, e *env) chan<- fakemodel.Reply {
	replies := make(chan fakemodel.Reply)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	e.model.SetHandler(func(openai.ChatCompletionRequest) fakemodel.Reply {
		select {
		case r := <-replies:
			return r
		case <-done:
			return fakemodel.ServerError()
		}
	})
	return replies
}

// A reply during a run is queued with a reaction and handled after the run.
func TestReplyDuringRunIsQueued(t *testing.T) {
	e := newEnv(t)
	replies := gate(t, e)
	thread := e.startSession("run", "do it")
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })
	e.waitChecklist(thread, "running", "executing", render.ActionStop)

	ts := e.reply(testUser, thread, "also update the README")
	e.waitFor("the queued reaction", func() bool {
		m, _ := e.slack.Message(testChannel, ts)
		return slices.Contains(m.Reactions, reactionQueued)
	})
	if e.model.Calls() != 1 {
		t.Fatal("a reply during a run started a second run")
	}

	replies <- fakemodel.Text("first part done")
	e.waitFor("the queued reply's run", func() bool { return e.model.Calls() == 2 })
	e.waitFor("the hourglass replaced by eyes", func() bool {
		m, _ := e.slack.Message(testChannel, ts)
		return !slices.Contains(m.Reactions, reactionQueued) && slices.Contains(m.Reactions, reactionPickedUp)
	})
	if got := e.lastUserMessage(1); got != "also update the README" {
		t.Errorf("queued reply ran as %q", got)
	}
	replies <- fakemodel.Text("README updated")
	e.waitMessage(thread, "README updated", 1)
	e.waitChecklist(thread, "idle")
}

// Stop cancels the run in flight and auto-run.
func TestStopButton(t *testing.T) {
	e := newEnv(t)
	gate(t, e)
	thread := e.startSession("run", "long job")
	e.waitFor("the first model request", func() bool { return e.model.Calls() == 1 })
	cl := e.waitChecklist(thread, render.ActionStop)

	e.click("U2", cl.TS, render.ActionStop)
	e.waitEphemeral(testChannel, "U2", "Only <@"+testUser+">")

	e.click(testUser, cl.TS, render.ActionStop)
	e.waitMessage(thread, "Stopped by", 1)
	cl = e.waitChecklist(thread, "idle")
	if strings.Contains(string(cl.Blocks), render.ActionStop) {
		t.Error("checklist still offers Stop")
	}
	if e.model.Calls() != 1 {
		t.Errorf("model calls = %d after Stop, want 1", e.model.Calls())
	}
}

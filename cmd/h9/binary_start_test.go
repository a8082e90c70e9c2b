package main

import (
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// kill -9 between a session's root message and its first commit (Slack
// posted the root message; its answer never came back): the next process
// finds the thread by the start it recorded and runs the session there,
// once, with no second root message.
func TestBinaryKilledBeforeTheFirstCommitFinishesTheSession(t *testing.T) {
	e := newBinEnv(t)
	e.start()
	release := e.slack.HangAfter("chat.postMessage")
	thread := e.slash("run tidy the logs")
	e.kill()
	release()
	if n := len(e.msgs(thread, "h9_cl_title")); n != 0 {
		t.Fatalf("%d checklists before the restart: the kill came too late to test anything", n)
	}
	e.model.Enqueue(fakemodel.Text("Tidied."))
	e.start()
	e.waitMsg(thread, "Done:", 1)
	if n := len(e.roots()); n != 1 {
		t.Errorf("%d root messages, want the one posted before the kill", n)
	}
	if n := len(e.msgs(thread, "h9_cl_title")); n != 1 {
		t.Errorf("%d checklists in the thread, want 1", n)
	}
}

package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
)

// TestShutdownLeavesNothingRunningForTheStore hangs every Web API call
// while sessions run and while commands wait for Slack, then stops the
// bot: Run must return only once nothing of the bot runs any more, so the
// store closed right after it sees no call, and nothing it would have
// saved is lost to a closed store.
func TestShutdownLeavesNothingRunningForTheStore(t *testing.T) {
	e := prepareEnv(t, t.TempDir())
	e.logs = &syncBuffer{}
	b := e.newBot()
	b.grace = 300 * time.Millisecond
	e.run(b)
	e.model.SetLatency(50 * time.Millisecond)
	for range 3 {
		e.model.Enqueue(worked("step:done"), worked("step:done"), worked("step:done"), fakemodel.Text("ok"))
	}
	for i := range 3 {
		e.startSession("run", "task "+itoa(i))
	}
	release := e.slack.Hang("")
	defer release()
	for range 5 {
		e.slash(testUser, testChannel, "status") // each waits on a hung chat.getPermalink
	}
	e.stop()
	if n := b.tasks.count(); n != 0 {
		t.Fatalf("%d of the bot's goroutines still run after Run returned", n)
	}
	if n := len(b.reg.actors); n != 0 {
		t.Fatalf("%d actors still run after Run returned", n)
	}
	e.db.Close()
	release()
	if strings.Contains(e.logs.String(), "database not open") {
		t.Fatalf("a store call came after Run returned:\n%s", e.logs.String())
	}
}

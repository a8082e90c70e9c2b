package bot

import (
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/render"
)

// In a fleet the thread is told of a refused host once, whichever replica
// holds the session: the replica that takes it over after the first one
// stopped finds the host told (its proxy is new and tells it again), still
// tells a new one, and decides the ask the first replica posted.
func TestFleetRefusedHostToldOnce(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Prefer("a")
	f.model.Enqueue(fakemodel.Text("Looked."))
	thread := f.startSession("run", "look around")
	f.waitMessage(thread, "Looked.", 1)
	sid := newSessionID(testTeam, testChannel, thread)
	const hp = "registry.npmjs.org:443"
	f.replicas["a"].bot.NetworkRefused(sid, "npm install", hp)
	ask := f.networkAsk(thread, hp)

	f.replicas["a"].stop()
	b := f.replicas["b"].bot
	b.NetworkRefused(sid, "npm install", hp)
	b.NetworkRefused(sid, "npm install", "other.test:443")
	f.networkAsk(thread, "other.test:443")
	if n := len(f.botMessages(thread, "tried to reach `"+hp+"`")); n != 1 {
		t.Errorf("%s was told %d times, want once", hp, n)
	}
	if n := f.callsBy("b", "chat.postMessage", thread); n == 0 {
		t.Error("replica b posted nothing: the second host was not its")
	}
	f.click(testUser, ask.TS, render.ActionNetAllowSession)
	f.waitFor("the first replica's ask decided by the second", func() bool {
		m, _ := f.slack.Message(testChannel, ask.TS)
		return len(m.Text) > 0 && len(f.botMessages(thread, "Allowed by <@"+testUser+"> for this session")) == 1
	})
	if _, allowed, err := b.SessionNetwork(f.ctx, sid); err != nil || len(allowed) != 1 || allowed[0] != hp {
		t.Errorf("allowed after the click on b: %q %v", allowed, err)
	}
}

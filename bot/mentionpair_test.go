package bot

import (
	"testing"

	"github.com/h9-app/h9/bot/render"
)

// idleBot is a Bot on e's fakes and DB that is never Run: the test feeds
// it messages directly, as its socket loop would, with its user id unknown
// (no auth.test, no authorizations in the events).
func idleBot(e *env) *Bot {
	e.stop() // the env's own bot must not answer too
	b := e.newBot()
	e.t.Cleanup(b.shutdown)
	return b
}

// With the bot's id unknown, a mention's message event looks like a plain
// reply. Whichever comes first, the pair is one request: in a thread with
// no session the app_mention still starts one; in a session's thread it is
// one reply, not two.
func TestMentionPairWithUnknownBotID(t *testing.T) {
	e := newEnv(t)
	b := idleBot(e)
	pair := func(thread, ts, text string) {
		b.onMessage(inbound{user: testUser, text: text, channel: testChannel, ts: ts, threadTS: thread}, nil)
		b.onMessage(inbound{user: testUser, text: text, channel: testChannel, ts: ts, threadTS: thread, mention: true}, nil)
	}

	// A mention inside a thread that is no session yet: message event first.
	parent := "1800000000.000100"
	e.model.Enqueue(planReplies("Plan.", "a:pending")...)
	pair(parent, "1800000000.000200", "<@UBOT> add a health check")
	review := e.waitMessage(parent, render.ActionApproveAuto, 1)

	// The same in the session's thread now: one revision, not two.
	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
	pair(parent, "1800000000.000300", "<@UBOT> also b")
	e.waitFor("the revised review", func() bool {
		for _, m := range e.botMessages(parent, render.ActionApproveAuto) {
			if m.TS != review.TS {
				return true
			}
		}
		return false
	})
	b.shutdown()
	if n := len(e.slack.Calls("reactions.add")); n != 0 {
		t.Errorf("%d reactions: the pair's second event was queued as another reply", n)
	}
	if got := e.model.Calls(); got != 4 {
		t.Errorf("model calls = %d, want 4 (two plan runs)", got)
	}
}

package bot

import (
	"time"
)

// The database going away (ARCHITECTURE.md, "Lifetimes and deadlines"):
// what a user sent while the store does not answer is never acked and
// dropped, and nothing is posted before the save that records it.

// cannotSaveText answers at once a click, reply or command that arrived
// while the store does not answer, so that its sender tries again.
const cannotSaveText = "h9 cannot save right now, try again in a moment."

// cannotSave tells m's sender, if m has one, that h9 could not take it.
func (a *actor) cannotSave(m message) {
	user := ""
	switch m := m.(type) {
	case msgAction:
		user = m.user
	case msgReply:
		user = m.user
	case msgMention:
		user = m.user
	case msgCreate:
		user = m.owner
	case msgStatus:
		user = m.user
	}
	if user == "" {
		return
	}
	_ = a.b.api.postEphemeral(a.b.bg, a.log, a.key.channel, user, a.key.ts, text(cannotSaveText))
}

// postRetryPause is how long a post whose recording save failed waits
// before its save is tried again: the store retries lost connections
// itself within each call, so this paces calls that failed outright.
const postRetryPause = 2 * time.Second

// postLater tries the pending post key again after postRetryPause; the
// actor stays (a.side) until it has, so the post is not forgotten.
func (a *actor) postLater(key string) {
	a.side++
	ctx := a.ctx
	started := a.b.tasks.spawn(func() {
		t := time.NewTimer(postRetryPause)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		a.push(msgPostAgain{key: key})
	})
	if !started {
		a.side--
	}
}

// msgPostAgain: the pending post key may be tried again.
type msgPostAgain struct{ key string }

func (m msgPostAgain) handle(a *actor) {
	a.side--
	if a.rec != nil && !a.lost {
		a.postPending(m.key)
	}
}

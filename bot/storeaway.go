package bot

import (
	"sync"
	"time"
)

// The database going away (ARCHITECTURE.md, "Lifetimes and deadlines"):
// what a user sent while the store does not answer is never acked and
// dropped, and nothing is posted before the save that records it.

// cannotSaveText answers at once a click, reply or command that arrived
// while the store does not answer, so that its sender tries again.
const cannotSaveText = "h9 cannot save right now, try again in a moment."

// cannotSave tells m's sender, if m has one, that h9 could not take it.
// A reply is h9's only in a thread with a session: with the store not
// answering, one in a thread this process never saw with a session is
// chatter as far as it can tell, and is not answered (it is logged).
func (a *actor) cannotSave(m message) {
	user := ""
	switch m := m.(type) {
	case msgAction:
		user = m.user
	case msgReply:
		if !a.b.known.has(a.key) {
			a.log.Warn("a reply in a thread h9 saw no session in, while the store does not answer; not answered")
			return
		}
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
	_ = a.b.api.PostEphemeral(a.b.bg, a.log, a.key.channel, user, a.key.ts, text(cannotSaveText))
}

// knownThreads are the threads this process saw holding a session, so
// that a reply during an outage is answered only where h9 works. Bounded:
// when full it starts again (a forgotten thread's reply is then only
// logged).
type knownThreads struct {
	mu sync.Mutex
	m  map[threadKey]struct{}
}

// maxKnownThreads bounds knownThreads (about 100 bytes each).
const maxKnownThreads = 10000

func (k *knownThreads) add(t threadKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKnownThreads {
		k.m = map[threadKey]struct{}{}
	}
	k.m[t] = struct{}{}
}

func (k *knownThreads) has(t threadKey) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[t]
	return ok
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

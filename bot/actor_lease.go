package bot

import (
	"errors"

	"github.com/h9-app/h9/agent/store"
)

// An actor works on its thread's session only under the thread's lease
// (Leases): it takes it before reading the session, drops the session the
// moment the lease is lost (renewal too late, a write fenced, a Slack
// call refused), and gives it up when the session rests, so that any
// replica takes the next message. Another replica's session is not
// touched: what arrives for it is forwarded to its holder (fleet.go).

// leaseKey is the lease of the actor's thread.
func (a *actor) leaseKey() store.LeaseKey {
	return store.LeaseKey{Channel: a.key.channel, Thread: a.key.ts}
}

// takeLease takes the thread's lease before m is handled, and reports
// whether m may now be. A thread without a session needs no lease unless
// m starts one: such a message is handled at once, on nothing.
func (a *actor) takeLease(m message) bool {
	if _, starts := m.(starter); !starts && a.noSession() {
		m.handle(a)
		return false
	}
	l, err := a.b.leases.AcquireLease(a.b.bg, a.leaseKey())
	switch {
	case errors.Is(err, store.ErrLeaseHeld):
		a.lost = true // another replica's session: this actor only forwards
		a.log.Debug("the session is another replica's; forwarding", "holder", l.Owner)
		if in, ok := m.(input); ok {
			a.forward(in)
		}
		return false
	case err != nil:
		if c, ok := m.(msgCreate); ok && c.start != "" {
			a.startLater(c, err)
			return false
		}
		a.log.Error("taking the session's lease; its sender is told to try again", "err", err)
		a.cannotSave(m)
		return false
	}
	a.mu.Lock()
	a.lease, a.leased = l, true
	a.mu.Unlock()
	a.ctx = withLease(a.ctx, a.leaseHeld)
	if waiting := a.takeInbox(); len(waiting) > 0 {
		a.unshift(append(waiting, m)...) // what other replicas received first goes first
		return false
	}
	return true
}

// startLaterText answers /h9 plan or run whose thread began but whose
// lease could not be taken: its start stays in the start log, and the
// start sweep gives the session to this thread (starts.go).
const startLaterText = "h9 could not start this session yet: it cannot save right now. " +
	"It starts here by itself within a few minutes, so there is no need to run the command again."

// startLater leaves a new session whose lease could not be taken (err)
// right after its root message to the start sweep, which finishes it in
// this thread: its user is told so once, never asked to try again (that
// would make the one request two sessions). A sweep's own delivery that
// fails the same way is only logged: the next sweep tries again.
func (a *actor) startLater(c msgCreate, err error) {
	a.log.Error("taking a new session's lease failed; the start sweep finishes it in this thread", "start", c.start, "err", err)
	if !c.swept {
		_ = a.b.api.PostEphemeral(a.b.bg, a.log, a.key.channel, c.owner, a.key.ts, text(startLaterText))
	}
}

// noSession reports whether the thread has no session (a read, no lease).
func (a *actor) noSession() bool {
	_, err := a.b.store.FindThread(a.b.bg, a.key.channel, a.key.ts)
	return errors.Is(err, store.ErrNotFound)
}

// holding reports whether the actor may still act for the session, and
// drops it the first time it may not.
func (a *actor) holding() bool {
	if a.lost {
		return false
	}
	a.adoptRetaken()
	if a.leased && !a.b.leases.LeaseValid(a.lease) {
		a.drop("the lease lapsed")
		return !a.lost
	}
	return true
}

// drop gives the session up at once: no write, post or run of this
// actor goes on. The actor stays until its run has returned (the agent
// runs one run per session at a time), forwarding what arrives meanwhile.
func (a *actor) drop(why string) {
	if a.lost || a.keptUnstored() {
		return
	}
	a.lost = true
	a.b.follows.Forget(a.key)
	a.log.Warn("dropping the session: its lease is no longer this replica's", "why", why)
	a.cancel()
	if a.run != nil {
		a.run.cancel()
	}
	if a.prep != nil {
		a.prep.cancel()
	}
	if w := a.waiter; w != nil {
		a.waiter = nil
		w <- false
	}
}

// saveFailed handles a failed save: a fenced one means the lease is gone;
// otherwise the session goes on in memory and the next save retries.
func (a *actor) saveFailed(err error) {
	if errors.Is(err, store.ErrFenced) {
		a.drop("a save was fenced")
		return
	}
	a.log.Error("saving session", "err", err)
}

// release gives the lease up as the actor retires, unless it was lost.
func (a *actor) release() {
	defer a.cancel()
	a.b.follows.Forget(a.key)
	if !a.leased || a.lost {
		return
	}
	if err := a.b.leases.ReleaseLease(a.b.bg, a.lease); err != nil {
		a.log.Warn("releasing the session's lease; it lapses by itself", "err", err)
	}
}

// leaseLost is called by the store (off the actor) when l is lost: the
// session's Slack calls stop at once, the rest on the actor.
func (a *actor) leaseLost(l store.Lease) {
	a.mu.Lock()
	mine := a.leased && (a.lease.Token == l.Token || a.retaken != nil && a.retaken.Token == l.Token)
	unstored := a.unstored
	a.mu.Unlock()
	if !mine {
		return
	}
	if !unstored { // a session not stored yet may take the lease again
		a.cancel()
	}
	a.push(msgLeaseLost{token: l.Token})
}

// onLeaseLost routes a lost lease to its thread's actor.
func (b *Bot) onLeaseLost(l store.Lease) {
	if a := b.reg.find(threadKey{channel: l.Key.Channel, ts: l.Key.Thread}); a != nil {
		a.leaseLost(l)
	}
}

// msgLeaseLost: the store reported the session's lease lost (the one
// with token: an older one, which the first save replaced, is no loss).
type msgLeaseLost struct{ token int64 }

func (m msgLeaseLost) handle(a *actor) {
	a.adoptRetaken()
	if a.lease.Token == m.token {
		a.drop("the store reported the lease lost")
	}
}

// unshift puts ms at the front of the inbox, in order.
func (a *actor) unshift(ms ...message) {
	a.mu.Lock()
	a.inbox = append(ms, a.inbox...)
	a.mu.Unlock()
	a.signal()
}

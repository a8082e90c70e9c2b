package bot

import (
	"context"
	"errors"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/slackapi"
)

// Leases is how replicas of h9 share sessions: a replica works on a
// thread's session only while it holds the thread's lease, and every
// write of the session is fenced by it (agent/store/pgstore). With one
// process on a bbolt file every lease is granted (agent/store/boltstore).
type Leases interface {
	// AcquireLease makes this replica the key's holder, or fails with
	// store.ErrLeaseHeld (the Lease returned then names the holder).
	AcquireLease(ctx context.Context, key store.LeaseKey) (store.Lease, error)
	// ReleaseLease gives a lease up, so any replica may take the key.
	ReleaseLease(ctx context.Context, l store.Lease) error
	// LeaseValid reports, without I/O, whether l is still held by this
	// process's clock: false from the moment a paused replica resumes
	// past its lease.
	LeaseValid(l store.Lease) bool
	// OnLeaseLost registers f, called with each lease this replica loses.
	OnLeaseLost(f func(store.Lease))
}

// withLease marks ctx's Slack calls as made under the lease held reports
// on: once it is false they are refused unsent (bot/slackapi's lease
// gate). It asks for the actor's current lease, which a new session may
// take again before its first save (below).
func withLease(ctx context.Context, held func() bool) context.Context {
	return slackapi.WithLease(ctx, held)
}

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

// A new session until its record is first stored (ARCHITECTURE.md,
// "Lifetimes and deadlines"). Nobody else can hold it: no replica adopts
// what is not stored, and the delivery's dedup claim kept the event to
// this replica. So when its lease lapses before that first commit (the
// database paused past the TTL, the replica stopped for a while), or the
// first save is fenced for it, the lease is taken again, with the normal
// acquire that fails if someone else holds it, and the record saved;
// a store that does not answer is asked again until firstSaveTimeout.
// Dropping the session instead would leave the thread with a checklist on
// "running" that no replica can ever adopt.

// firstSaveTimeout bounds the first save, or taking the lease again, with
// its retries: a few store deadlines, enough to ride out a restart.
const firstSaveTimeout = 3 * storeTimeout

// firstSaveRetry is the pause between two attempts.
const firstSaveRetry = 500 * time.Millisecond

// commitFirst stores a new session's first record, off the actor.
func (a *actor) commitFirst(rec store.SessionRecord) error {
	ctx, cancel := context.WithTimeout(a.b.bg, firstSaveTimeout)
	defer cancel()
	for {
		err := a.b.store.PutSession(ctx, rec)
		switch {
		case err == nil:
			a.noteStored()
			return nil
		case errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrConflict):
			return err
		case errors.Is(err, store.ErrFenced):
			l, aerr := a.acquireAgain(ctx, err)
			if aerr != nil {
				return err
			}
			a.mu.Lock()
			a.retaken = &l
			a.mu.Unlock()
			continue
		}
		a.log.Warn("the session's first save failed; trying again", "err", err)
		if !pause(ctx) {
			return err
		}
	}
}

// acquireAgain takes the thread's lease again after it was lost (why),
// asking again while the store does not answer, until ctx ends. It gives
// up at once when another replica holds the lease.
func (a *actor) acquireAgain(ctx context.Context, why error) (store.Lease, error) {
	for {
		l, err := a.b.leases.AcquireLease(ctx, a.leaseKey())
		switch {
		case err == nil:
			a.log.Warn("the lease lapsed before the session was first stored; took it again", "why", why)
			return l, nil
		case errors.Is(err, store.ErrLeaseHeld):
			a.log.Error("the session was never stored and another replica holds its lease; giving it up", "holder", l.Owner)
			return l, err
		}
		a.log.Warn("taking the lease of a session not stored yet again failed; trying again", "err", err)
		if !pause(ctx) {
			return l, err
		}
	}
}

// pause waits firstSaveRetry, or reports false once ctx ended.
func pause(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(firstSaveRetry):
		return true
	}
}

// keptUnstored is asked before the session is dropped, and reports
// whether it is kept: its record was never stored and the lease is
// this replica's again. A first save in flight is waited for (it takes
// the lease again itself); without one, the lease is taken again here.
func (a *actor) keptUnstored() bool {
	if a.committed != nil {
		<-a.committed
		a.committed = nil
		return a.adoptRetaken() && a.b.leases.LeaseValid(a.lease)
	}
	a.mu.Lock()
	unstored := a.unstored
	a.mu.Unlock()
	if !unstored || !a.leased {
		return false
	}
	ctx, cancel := context.WithTimeout(a.b.bg, firstSaveTimeout)
	defer cancel()
	l, err := a.acquireAgain(ctx, errors.New("the lease lapsed"))
	if err != nil {
		return false
	}
	a.mu.Lock()
	a.lease = l
	a.mu.Unlock()
	return a.b.leases.LeaseValid(l)
}

// noteStored: the session's record is stored; from now on a lost lease
// means another replica may have it.
func (a *actor) noteStored() {
	a.mu.Lock()
	a.unstored = false
	start := a.start
	a.start = ""
	a.mu.Unlock()
	if start != "" {
		a.b.tasks.spawn(func() { a.b.forgetStart(a.log, start) })
	}
}

// adoptRetaken makes the lease the first save took again the actor's,
// and reports whether there was one.
func (a *actor) adoptRetaken() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retaken == nil {
		return false
	}
	a.lease, a.retaken = *a.retaken, nil
	return true
}

// leaseHeld reports whether the actor's current lease, or the one its
// first save took again, still holds (the gate of the session's Slack
// calls, withLease).
func (a *actor) leaseHeld() bool {
	a.mu.Lock()
	l, retaken := a.lease, a.retaken
	a.mu.Unlock()
	return a.b.leases.LeaseValid(l) || retaken != nil && a.b.leases.LeaseValid(*retaken)
}

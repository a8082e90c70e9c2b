package bot

import (
	"context"
	"errors"
	"time"

	"github.com/h9-app/h9/agent/store"
)

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

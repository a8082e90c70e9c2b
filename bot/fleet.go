package bot

import (
	"context"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// Fleet is what replicas sharing one Store use to hand each other work
// (agent/store/pgstore implements it). Whichever replica Slack sends an
// envelope to handles it when it holds (or can take) the thread's lease,
// and otherwise posts it to the thread's durable inbox, which wakes the
// holder; a replica that takes a thread over first empties its inbox.
type Fleet interface {
	// PostInbox appends an item to a thread's inbox and wakes the
	// replicas (OnInbox).
	PostInbox(ctx context.Context, key store.LeaseKey, item []byte) error
	// TakeInbox removes and returns a thread's items, oldest first.
	TakeInbox(ctx context.Context, key store.LeaseKey) ([][]byte, error)
	// Orphans lists the threads that need a holder: sessions a restart
	// must act on whose lease lapsed (a replica died) or was given up, and
	// inbox items no live lease covers.
	Orphans(ctx context.Context) ([]store.LeaseKey, error)
	// OnInbox registers f, called with the thread of every item posted
	// by any replica (and of every thread with items waiting, after the
	// store reconnected to listen). f must not block.
	OnInbox(f func(store.LeaseKey))
	// LeaseTTL is how long a lease lasts without renewal.
	LeaseTTL() time.Duration
}

// forward hands an input for another replica's session to its inbox.
func (a *actor) forward(in input) {
	if a.b.fleet == nil {
		a.log.Error("a message for a session this process does not hold was dropped")
		return
	}
	data, err := encodeItem(in)
	if err == nil {
		err = a.b.fleet.PostInbox(a.b.bg, a.leaseKey(), data)
	}
	if err != nil {
		a.log.Error("forwarding a message to the session's holder; its sender is told to try again", "err", err)
		a.cannotSave(in)
	}
}

// takeInbox empties the thread's durable inbox into messages, once this
// replica holds the lease.
func (a *actor) takeInbox() []message {
	if a.b.fleet == nil {
		return nil
	}
	items, err := a.b.fleet.TakeInbox(a.b.bg, a.leaseKey())
	if err != nil {
		a.log.Error("reading the session's inbox", "err", err)
		return nil
	}
	out := make([]message, 0, len(items))
	for _, data := range items {
		m, err := decodeItem(data)
		if err != nil {
			a.log.Error("an inbox item does not decode; dropped", "err", err)
			continue
		}
		out = append(out, m)
	}
	return out
}

// msgDrain: another replica posted to the thread's inbox.
type msgDrain struct{}

func (msgDrain) handle(a *actor) {
	if a.lost {
		return
	}
	if waiting := a.takeInbox(); len(waiting) > 0 {
		a.unshift(waiting...)
	}
}

// onInbox wakes the thread's actor, or starts one to take the thread
// when it has no holder (an actor that finds it held lets it be).
func (b *Bot) onInbox(key store.LeaseKey) {
	if !b.stopping.Load() {
		b.reg.deliver(threadKey{channel: key.Channel, ts: key.Thread}, msgDrain{})
	}
}

// adoptLoop takes over orphaned threads until ctx ends: every third of a
// lease's TTL, so a dead replica's sessions resume within twice the TTL
// of its death (its last renewal, a TTL, a scan).
func (b *Bot) adoptLoop(ctx context.Context) {
	t := time.NewTicker(b.fleet.LeaseTTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.adoptOrphans(ctx)
		}
	}
}

// adoptOrphans hands every orphaned thread to an actor, which resumes its
// session as a restart does if it wins the lease.
func (b *Bot) adoptOrphans(ctx context.Context) {
	keys, err := b.fleet.Orphans(ctx)
	if err != nil {
		b.log.Warn("looking for sessions without a holder", "err", err)
		return
	}
	for _, k := range keys {
		if b.stopping.Load() {
			return
		}
		thread := threadKey{channel: k.Channel, ts: k.Thread}
		b.reg.deliver(thread, msgRecover{}) // a session to resume, if it has one
		b.reg.deliver(thread, msgDrain{})   // its inbox, even when it has none yet
	}
}

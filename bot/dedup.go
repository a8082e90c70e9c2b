package bot

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// dedupSize bounds the seen keys in memory, as the store bounds them:
// Slack redelivers within minutes, so the last few thousand envelopes and
// messages are plenty.
const dedupSize = store.DedupLimit

// dedup remembers recently seen keys: envelope ids, event ids, and
// channel+ts of messages (Slack sends a mention as app_mention AND message).
// The check is in memory; new keys are claimed in the store by a background
// flusher in batches, so the socket loop never waits for a commit, and a
// restart reloads them so a redelivery after a crash is still dropped.
type dedup struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string // insertion order, for eviction
	next int

	store   DedupStore
	log     *slog.Logger
	pending []string // keys not yet claimed in the store
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	now     func() time.Time
}

// newDedup loads the keys the store saw within store.DedupTTL.
func newDedup(st DedupStore, log *slog.Logger) (*dedup, error) {
	d := &dedup{
		seen: make(map[string]struct{}, dedupSize), ring: make([]string, dedupSize),
		store: st, log: log, kick: make(chan struct{}, 1), now: time.Now,
	}
	keys, err := st.Claimed(context.Background(), d.now().Add(-store.DedupTTL))
	if err != nil {
		return nil, fmt.Errorf("%w: loading seen events: %w", ErrStore, err)
	}
	for _, k := range keys[max(0, len(keys)-dedupSize):] {
		d.remember(k)
	}
	return d, nil
}

// start runs the flusher until close.
func (d *dedup) start() {
	if d.stop != nil {
		return
	}
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go d.flushLoop()
}

// close claims what is pending and stops the flusher.
func (d *dedup) close() {
	if d.stop == nil {
		return
	}
	close(d.stop)
	<-d.done
	d.stop = nil
}

// first records key and reports whether it was new. An empty key is always new.
func (d *dedup) first(key string) bool {
	if key == "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; ok {
		return false
	}
	d.remember(key)
	d.pending = append(d.pending, key)
	select {
	case d.kick <- struct{}{}:
	default:
	}
	return true
}

// note records key as seen without claiming it (a claimer does).
func (d *dedup) note(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; !ok {
		d.remember(key)
	}
}

// has reports whether key was seen, without recording it.
func (d *dedup) has(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.seen[key]
	return ok
}

// remember adds key to memory, evicting the oldest. Caller holds mu (or owns d).
func (d *dedup) remember(key string) {
	if old := d.ring[d.next]; old != "" {
		delete(d.seen, old)
	}
	d.ring[d.next] = key
	d.next = (d.next + 1) % len(d.ring)
	d.seen[key] = struct{}{}
}

func (d *dedup) flushLoop() {
	defer close(d.done)
	for {
		select {
		case <-d.kick:
			d.flush()
		case <-d.stop:
			d.flush()
			return
		}
	}
}

// flush claims the pending keys in the store, in one batch. With bbolt the
// write shares the sessions' group commit: under a burst of events a commit
// of its own per batch queued behind (and held up) theirs. Memory has
// already decided, so what the claim answers is not needed here. A failure
// is logged and the keys stay in memory: dedup within this process still
// works.
func (d *dedup) flush() {
	d.mu.Lock()
	batch := d.pending
	d.pending = nil
	d.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if _, err := d.store.Claim(context.Background(), batch, d.now()); err != nil {
		d.log.Error("persisting seen events", "err", err, "keys", len(batch))
	}
}

package bot

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// admit runs then once for a delivery (an envelope of kind) whose dedup
// keys nobody handled. One process decides in memory (dedup). In a fleet
// another replica may have had the same delivery (Slack's retries, a
// mention's two events reaching two replicas), so the keys are claimed in
// the shared store first and the first claim wins — off the socket loop,
// by the claimer, in the order deliveries arrived. then must not block.
// A delivery dropped for its envelope or event id is counted a duplicate.
func (b *Bot) admit(kind string, keys []string, then func()) {
	if b.claims == nil {
		for _, k := range keys {
			if !b.seen.first(k) {
				b.duplicate(kind, k)
				return
			}
		}
		then()
		return
	}
	if i := slices.IndexFunc(keys, b.seen.has); i >= 0 {
		b.duplicate(kind, keys[i]) // this replica had it already
		return
	}
	for _, k := range keys {
		b.seen.note(k)
	}
	b.claims.add(delivery{keys: keys, then: then, dup: func(k string) { b.duplicate(kind, k) }})
}

// duplicate counts a delivery dropped for key, when key names a delivery
// (an envelope or an event) rather than a message, whose second event is
// Slack's way to send a mention.
func (b *Bot) duplicate(kind, key string) {
	if strings.HasPrefix(key, "env:") || strings.HasPrefix(key, "ev:") {
		b.metrics.EnvelopeDuplicate(kind)
	}
}

// claimBatch bounds the keys one claim statement carries.
const claimBatch = 512

// claimTimeout bounds one batch's claim, within storeTimeout: every
// delivery of the fleet waits for it, and a store that does not answer
// this fast is failing (the batch then runs unchecked, see claim), so a
// hung database delays each delivery by this much and no more.
const claimTimeout = 3 * time.Second

// claimer claims deliveries' keys in the store in batches and runs the
// deliveries it won, in order, on its own goroutine.
type claimer struct {
	store DedupStore
	log   *slog.Logger
	now   func() time.Time

	mu      sync.Mutex
	pending []delivery
	kick    chan struct{}
}

type delivery struct {
	keys []string
	then func()
	dup  func(key string) // counts the delivery dropped for key
}

func newClaimer(st DedupStore, log *slog.Logger) *claimer {
	return &claimer{store: st, log: log, now: time.Now, kick: make(chan struct{}, 1)}
}

func (c *claimer) add(d delivery) {
	c.mu.Lock()
	c.pending = append(c.pending, d)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// run claims until ctx ends, then claims what is left.
func (c *claimer) run(ctx context.Context) {
	for {
		select {
		case <-c.kick:
			c.claimPending()
		case <-ctx.Done():
			c.claimPending()
			return
		}
	}
}

func (c *claimer) claimPending() {
	for {
		c.mu.Lock()
		n, keys := 0, 0
		for n < len(c.pending) && (n == 0 || keys+len(c.pending[n].keys) <= claimBatch) {
			keys += len(c.pending[n].keys)
			n++
		}
		batch := slices.Clone(c.pending[:n])
		c.pending = slices.Delete(c.pending, 0, n)
		c.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		c.claim(batch)
	}
}

// claim claims a batch's keys in one statement and runs each delivery
// all of whose keys were fresh. When the store fails, every delivery
// runs: handling one twice beats dropping it (and the store's failure
// stops most of what it would do anyway).
func (c *claimer) claim(batch []delivery) {
	var keys []string
	for _, d := range batch {
		keys = append(keys, d.keys...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	fresh, err := c.store.Claim(ctx, keys, c.now())
	if err != nil {
		c.log.Error("claiming deliveries in the store; handling them unchecked", "err", err, "keys", len(keys))
	}
	i := 0
	for _, d := range batch {
		lost := -1
		if err == nil {
			lost = slices.Index(fresh[i:i+len(d.keys)], false)
		}
		i += len(d.keys)
		if lost < 0 {
			d.then()
		} else if d.dup != nil {
			d.dup(d.keys[lost])
		}
	}
}

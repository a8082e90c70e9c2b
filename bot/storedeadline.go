package bot

import (
	"context"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// storeTimeout bounds every store call the bot makes (ARCHITECTURE.md,
// "Lifetimes and deadlines"). The PostgreSQL store sends a call again on
// a fresh connection until its context ends, so this is also how long a
// call waits for a database that went away: enough to ride out a restart
// or a failover (a few seconds), short enough that a click or a command
// gets its answer ("h9 cannot save right now…") while its user still
// looks, and under the default lease TTL, so that an actor stuck on a hung
// database notices its lease lapse soon after.
const storeTimeout = 10 * time.Second

// bounded derives a store call's context from the caller's.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, storeTimeout)
}

// timedStore is the Store with a deadline on every call; the bot holds
// its stores only through these wrappers (New).
type timedStore struct{ s Store }

func (t timedStore) PutSession(ctx context.Context, rec store.SessionRecord) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.PutSession(ctx, rec)
}

func (t timedStore) FindThread(ctx context.Context, channel, thread string) (store.SessionRecord, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.FindThread(ctx, channel, thread)
}

func (t timedStore) ListChannel(ctx context.Context, channel string) ([]store.SessionRecord, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.ListChannel(ctx, channel)
}

func (t timedStore) ListOwner(ctx context.Context, owner string, limit int) ([]store.SessionRecord, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.ListOwner(ctx, owner, limit)
}

func (t timedStore) ListActive(ctx context.Context) ([]store.SessionMeta, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.ListActive(ctx)
}

func (t timedStore) PutStart(ctx context.Context, st store.Start) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.PutStart(ctx, st)
}

func (t timedStore) Starts(ctx context.Context) ([]store.Start, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.Starts(ctx)
}

func (t timedStore) DeleteStart(ctx context.Context, id string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.DeleteStart(ctx, id)
}

func (t timedStore) Claim(ctx context.Context, keys []string, at time.Time) ([]bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.Claim(ctx, keys, at)
}

func (t timedStore) Claimed(ctx context.Context, since time.Time) ([]string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.Claimed(ctx, since)
}

func (t timedStore) ChannelSetting(ctx context.Context, channel, key string) (string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.ChannelSetting(ctx, channel, key)
}

func (t timedStore) SetChannelSetting(ctx context.Context, channel, key, value string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.SetChannelSetting(ctx, channel, key, value)
}

// timedLeases is Leases with a deadline on every call that does I/O.
type timedLeases struct{ Leases }

func (t timedLeases) AcquireLease(ctx context.Context, key store.LeaseKey) (store.Lease, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.Leases.AcquireLease(ctx, key)
}

func (t timedLeases) ReleaseLease(ctx context.Context, l store.Lease) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.Leases.ReleaseLease(ctx, l)
}

// timedFleet is Fleet with a deadline on every call that does I/O.
type timedFleet struct{ Fleet }

func (t timedFleet) PostInbox(ctx context.Context, key store.LeaseKey, item []byte) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.Fleet.PostInbox(ctx, key, item)
}

func (t timedFleet) TakeInbox(ctx context.Context, key store.LeaseKey) ([][]byte, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.Fleet.TakeInbox(ctx, key)
}

func (t timedFleet) Orphans(ctx context.Context) ([]store.LeaseKey, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.Fleet.Orphans(ctx)
}

// withDeadlines wraps cfg's stores so that every call has a deadline.
func withDeadlines(cfg Config) Config {
	cfg.Store = timedStore{cfg.Store}
	cfg.Leases = timedLeases{cfg.Leases}
	if cfg.Fleet != nil {
		cfg.Fleet = timedFleet{cfg.Fleet}
	}
	return cfg
}

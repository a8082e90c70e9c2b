package store

import "time"

// LeaseKey names what one lease covers: a Slack thread, the unit the bot
// routes by. A lease exists before its session does (a new thread), and
// the session it covers is the thread's.
type LeaseKey struct{ Channel, Thread string }

func (k LeaseKey) String() string { return k.Channel + "/" + k.Thread }

// Lease is one replica's hold on a key. While a replica holds it, every
// write of the key's session by that replica carries its token, and a
// write from an older hold (a replica paused past its lease) is refused.
type Lease struct {
	Key   LeaseKey
	Owner string // the replica holding it
	// Token is the fencing token: every acquisition of a key gets a
	// greater one than the last.
	Token int64
	// Expires is when the lease lapses unless renewed, by the database's
	// clock (zero for a backend without expiry).
	Expires time.Time
}

// DefaultLeaseTTL is how long a lease lasts without renewal unless
// configured (H9_LEASE_TTL).
const DefaultLeaseTTL = 15 * time.Second

// LeaseChange names what happened to a replica's leases, for metrics
// (h9_lease_changes_total). A backend without leases (bbolt: one process
// owns every session) reports none.
type LeaseChange string

// The lease changes.
const (
	LeaseAcquired  LeaseChange = "acquired"   // a free key, or one this replica held
	LeaseTakenOver LeaseChange = "taken_over" // a key whose lease another replica let lapse
	LeaseRenewed   LeaseChange = "renewed"    // a lease this replica holds, extended
	LeaseReleased  LeaseChange = "released"   // given up (the session rests, or shutdown)
	LeaseLost      LeaseChange = "lost"       // renewed too late, or another replica holds it
)

// LeaseChanges lists every LeaseChange, for metrics that show each at zero
// before it first happens.
func LeaseChanges() []LeaseChange {
	return []LeaseChange{LeaseAcquired, LeaseTakenOver, LeaseRenewed, LeaseReleased, LeaseLost}
}

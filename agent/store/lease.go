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

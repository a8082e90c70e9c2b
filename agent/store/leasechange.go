package store

// LeaseChange is what happened to one of this replica's leases on a
// session, as its metrics count it (h9_lease_changes_total).
type LeaseChange string

// The lease changes. A backend without leases (bbolt: one process owns
// every session) reports none.
const (
	// LeaseAcquired: this replica took a lease nobody held.
	LeaseAcquired LeaseChange = "acquired"
	// LeaseRenewed: this replica extended a lease it holds.
	LeaseRenewed LeaseChange = "renewed"
	// LeaseLost: a lease this replica held lapsed or moved to another
	// replica; it must stop writing the session.
	LeaseLost LeaseChange = "lost"
	// LeaseTakenOver: this replica took a lease another replica held and
	// let lapse (it died or paused), to resume its session.
	LeaseTakenOver LeaseChange = "taken_over"
	// LeaseReleased: this replica gave a lease up (the session went idle,
	// or h9 is shutting down).
	LeaseReleased LeaseChange = "released"
)

// LeaseChanges lists every LeaseChange, for metrics that show each at zero
// before it first happens.
func LeaseChanges() []LeaseChange {
	return []LeaseChange{LeaseAcquired, LeaseRenewed, LeaseLost, LeaseTakenOver, LeaseReleased}
}

// LeaseObserver hears a replica's lease changes, to count them. The
// backend that keeps leases calls it; it must be cheap, must not block and
// must be safe for concurrent use.
type LeaseObserver interface {
	LeaseChanged(LeaseChange)
}

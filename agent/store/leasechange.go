package store

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

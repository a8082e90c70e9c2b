package bot

import (
	"context"

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
// take again before its first save (actor_firstsave.go).
func withLease(ctx context.Context, held func() bool) context.Context {
	return slackapi.WithLease(ctx, held)
}

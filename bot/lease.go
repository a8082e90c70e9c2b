package bot

import (
	"context"
	"net/http"

	"github.com/h9-app/h9/agent/store"
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

// leaseCheck rides on the context of a session's Slack calls: whether the
// lease they are made under still holds (the actor's current lease: a new
// session's first save may take it again, actor_firstsave.go).
type leaseCheck struct{ held func() bool }

type leaseKey struct{}

// withLease marks ctx's Slack calls as made under the lease held reports on.
func withLease(ctx context.Context, held func() bool) context.Context {
	return context.WithValue(ctx, leaseKey{}, leaseCheck{held: held})
}

// leaseGate refuses a Web API request made under a lease this replica no
// longer holds, at the last moment before it leaves the process: a
// replica paused past its lease posts nothing once it resumes, whatever
// its goroutines were about to send.
type leaseGate struct{ next http.RoundTripper }

func (g leaseGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if c, ok := r.Context().Value(leaseKey{}).(leaseCheck); ok && !c.held() {
		return nil, errLeaseLost
	}
	return g.next.RoundTrip(r)
}

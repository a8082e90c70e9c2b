package boltstore

import (
	"context"

	"github.com/h9-app/h9/agent/store"
)

// localOwner names the holder of every lease of a bbolt Store.
const localOwner = "local"

// AcquireLease always succeeds: one process owns a bbolt file (its file
// lock keeps a second h9 out), so it owns every session. Leases exist
// here so that the bot runs one way on either backend.
func (s *Store) AcquireLease(_ context.Context, key store.LeaseKey) (store.Lease, error) {
	return store.Lease{Key: key, Owner: localOwner, Token: s.tokens.Add(1)}, nil
}

// ReleaseLease has nothing to release.
func (s *Store) ReleaseLease(context.Context, store.Lease) error { return nil }

// LeaseValid: a lease of the only process never lapses.
func (s *Store) LeaseValid(store.Lease) bool { return true }

// OnLeaseLost: no lease is ever lost, so f is never called.
func (s *Store) OnLeaseLost(func(store.Lease)) {}

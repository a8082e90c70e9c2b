package store

import "errors"

// Sentinel errors. Every error a backend returns wraps one of them with %w
// and names what it was doing (and the session); match with errors.Is.
var (
	// ErrNotFound: no record under that key (a bot session, say). Agent
	// sessions are never "not found": a session never written reads empty.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a write that does not fit what is stored, such as a step
	// appended at an index other than the history's length. Nothing of the
	// write was stored.
	ErrConflict = errors.New("conflicting write")
	// ErrInvalid: a record the backend cannot store (an empty id, say).
	ErrInvalid = errors.New("invalid record")
	// ErrCorrupt: stored data that does not decode.
	ErrCorrupt = errors.New("corrupt stored data")
	// ErrBackend: the backend itself failed (I/O, a closed database, a
	// lost connection). The write, if any, did not happen.
	ErrBackend = errors.New("storage backend failed")
)

// Sentinels of leases, with which replicas of h9 share sessions.
var (
	// ErrLeaseHeld: another replica holds an unexpired lease on the key.
	ErrLeaseHeld = errors.New("lease held by another replica")
	// ErrFenced: a write for a session whose lease this replica does not
	// hold (never took, released, or lost to a takeover). Nothing of the
	// write was stored; the replica must drop the session.
	ErrFenced = errors.New("lease lost: write refused")
)

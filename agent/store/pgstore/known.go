package pgstore

import "github.com/h9-app/h9/agent/store"

// What a holder knows of its thread, so that it need not ask again. While
// a replica holds a thread's lease, the thread's session record changes
// only by this replica's writes (PutSession is fenced), so the record it
// last read or wrote under the hold is the stored one; a write whose
// outcome is unknown (an error) forgets it. The inbox is different: other
// replicas post to it at any time, so only the read the acquisition made
// is kept, for the holder's first TakeInbox (later items are announced by
// NOTIFY and taken by a fresh read). The knowledge lasts only while the
// hold is valid by the local clock, which ends before the database lets
// another replica take the lease (holds.margin), as for the Slack calls.
type known struct {
	rec          *store.SessionRecord // nil: no record, or not known
	recKnown     bool
	inboxWaiting bool
	inboxKnown   bool
}

// saw notes what l's acquisition read: the inbox and the record (none is
// an answer too).
func (h *holds) saw(l store.Lease, k known) {
	k.recKnown, k.inboxKnown = true, true
	h.mu.Lock()
	defer h.mu.Unlock()
	if hd := h.leases[l.Key]; hd != nil && hd.lease.Token == l.Token {
		hd.known = k
	}
}

// inboxChecked returns, once per hold, whether its acquisition saw items
// waiting; read is false when that answer was used or never made.
func (h *holds) inboxChecked(key store.LeaseKey) (waiting, read bool) {
	if h == nil {
		return false, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[key]
	if hd == nil || !hd.known.inboxKnown {
		return false, false
	}
	hd.known.inboxKnown = false
	return hd.known.inboxWaiting, true
}

// record returns the thread's record as this holder knows it: found is
// false for a thread without one, ok false when it is not known (no valid
// hold, or a write's outcome unknown).
func (h *holds) record(key store.LeaseKey) (rec store.SessionRecord, found, ok bool) {
	if h == nil {
		return rec, false, false
	}
	l, held := h.get(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[key]
	if !held || hd == nil || hd.lease.Token != l.Token || !hd.known.recKnown {
		return rec, false, false
	}
	if hd.known.rec == nil {
		return rec, false, true
	}
	return *hd.known.rec, true, true
}

// wrote notes the outcome of a PutSession under key's hold: the record
// written, or (err) nothing known any more.
func (h *holds) wrote(key store.LeaseKey, rec store.SessionRecord, err error) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[key]
	if hd == nil {
		return
	}
	if err != nil {
		hd.known.rec, hd.known.recKnown = nil, false
		return
	}
	hd.known.rec, hd.known.recKnown = &rec, true
}

package pgstore

import (
	"slices"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// holds is what one replica holds: its leases, until when each is valid
// by this process's clock, and the sessions each covers. The database is
// the authority (h9_fence); this is what lets the replica stop writing,
// and the bot stop posting, before a takeover is possible.
type holds struct {
	replica string
	ttl     time.Duration
	margin  time.Duration // a local deadline ends this long before the database's

	mu      sync.Mutex
	leases  map[store.LeaseKey]*hold
	ids     map[string]store.LeaseKey // session id → the key whose lease covers it
	onLost  func(store.Lease)
	changed func(store.LeaseChange, int) // Options.OnLeaseChange; set once at Open
}

type hold struct {
	lease store.Lease
	until time.Time // valid until, on the local monotonic clock
	ids   []string
	known known // what the holder knows of its thread (known.go)
}

func newHolds(replica string, ttl time.Duration) *holds {
	return &holds{replica: replica, ttl: ttl, margin: ttl / 10,
		leases: map[store.LeaseKey]*hold{}, ids: map[string]store.LeaseKey{}}
}

// add records a lease acquired by a statement sent at sent: the database
// set its expiry after that, so sent+ttl is a safe local bound.
func (h *holds) add(l store.Lease, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.leases[l.Key]; old != nil {
		h.forgetIDsLocked(old)
	}
	h.leases[l.Key] = &hold{lease: l, until: sent.Add(h.ttl - h.margin)}
}

// get returns the hold of key while it is valid by the local clock.
func (h *holds) get(key store.LeaseKey) (store.Lease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[key]
	if hd == nil || !time.Now().Before(hd.until) {
		return store.Lease{}, false
	}
	return hd.lease, true
}

// valid reports whether l is still held, by the local clock.
func (h *holds) valid(l store.Lease) bool {
	got, ok := h.get(l.Key)
	return ok && got.Token == l.Token
}

// forSession returns the hold covering a session id.
func (h *holds) forSession(id string) (store.Lease, bool) {
	h.mu.Lock()
	key, known := h.ids[id]
	h.mu.Unlock()
	if !known {
		return store.Lease{}, false
	}
	return h.get(key)
}

// bind notes that session id lives in key's thread, when key is held.
func (h *holds) bind(id string, key store.LeaseKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[key]
	if hd == nil || h.ids[id] == key {
		return
	}
	h.ids[id] = key
	hd.ids = append(hd.ids, id)
}

// drop forgets l, when it is still the hold of its key.
func (h *holds) drop(l store.Lease) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.leases[l.Key]
	if hd == nil || hd.lease.Token != l.Token {
		return false
	}
	h.forgetIDsLocked(hd)
	delete(h.leases, l.Key)
	return true
}

func (h *holds) forgetIDsLocked(hd *hold) {
	for _, id := range hd.ids {
		if h.ids[id] == hd.lease.Key {
			delete(h.ids, id)
		}
	}
}

// all lists the held leases.
func (h *holds) all() []store.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]store.Lease, 0, len(h.leases))
	for _, hd := range h.leases {
		out = append(out, hd.lease)
	}
	return out
}

// expired drops and returns the leases past their local deadline.
func (h *holds) expired(now time.Time) []store.Lease {
	var out []store.Lease
	for _, l := range h.all() {
		h.mu.Lock()
		hd := h.leases[l.Key]
		late := hd != nil && hd.lease.Token == l.Token && !now.Before(hd.until)
		h.mu.Unlock()
		if late && h.drop(l) {
			out = append(out, l)
		}
	}
	return out
}

// renewed extends the leases of tried that the database renewed (by a
// statement sent at sent) and drops and returns the others: lost.
func (h *holds) renewed(tried []store.Lease, ok map[store.LeaseKey]int64, sent time.Time) []store.Lease {
	var lost []store.Lease
	for _, l := range tried {
		if ok[l.Key] == l.Token {
			h.mu.Lock()
			if hd := h.leases[l.Key]; hd != nil && hd.lease.Token == l.Token {
				hd.until = sent.Add(h.ttl - h.margin)
			}
			h.mu.Unlock()
			continue
		}
		if h.drop(l) {
			lost = append(lost, l)
		}
	}
	return lost
}

// lost tells the watcher about leases this replica lost.
func (h *holds) lost(ls []store.Lease) {
	h.mu.Lock()
	f := h.onLost
	h.mu.Unlock()
	if f == nil {
		f = func(store.Lease) {}
	}
	for _, l := range slices.Clip(ls) {
		if h.changed != nil {
			h.changed(store.LeaseLost, 1)
		}
		f(l)
	}
}

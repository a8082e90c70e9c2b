package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// Automations' records (ARCHITECTURE.md, "Storage: one seam, two
// backends"): one process owns a bbolt file, so compare-and-swap here
// guards against the engine's own goroutines, not against other replicas.
//
//	automation_occurrences  automation NUL key → Occurrence (JSON)
//	automation_pending      automation NUL key → ""   (recorded and queued ones)
//	automation_by_time      8-byte recorded unix nanos + automation NUL key → "" (pruning, oldest first)
//	automation_states       name → AutomationState (JSON)
var (
	bucketOccurrences = []byte("automation_occurrences")
	bucketPending     = []byte("automation_pending")
	bucketOccByTime   = []byte("automation_by_time")
	bucketAutoStates  = []byte("automation_states")
)

// Shared reports that no other process writes the store: bbolt's file
// lock gives it to one process, so the automation engine keeps what
// only its own goroutines contend for (overlap's slot) in memory.
func (s *Store) Shared() bool { return false }

// RecordOccurrence stores o unless its key is taken, and returns what is
// stored and whether this call stored it. The stored one has Version 1.
func (s *Store) RecordOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, bool, error) {
	o = o.Normal()
	what := "recording occurrence " + o.Key + " of " + o.Automation
	if err := o.Check(); err != nil {
		return store.Occurrence{}, false, fmt.Errorf("%s: %w", what, err)
	}
	o.Version = 1
	var got store.Occurrence
	var inserted bool
	k := compositeKey(o.Automation, o.Key)
	// A repeat (a replay, a redelivery) is answered from a read: no
	// commit waits for it.
	var found bool
	err := s.view(ctx, what, func(tx *bolt.Tx) error {
		var err error
		got, found, err = getOccurrence(tx, k)
		return err
	})
	if err != nil || found {
		return got, false, err
	}
	err = s.update(ctx, what, func(tx *bolt.Tx) error {
		old, found, err := getOccurrence(tx, k)
		if err != nil || found {
			got, inserted = old, false
			return err
		}
		got, inserted = o, true
		return putOccurrence(tx, k, store.Occurrence{}, o)
	})
	if err != nil {
		return store.Occurrence{}, false, err
	}
	return got, inserted, nil
}

// Occurrence returns one occurrence, or ErrNotFound.
func (s *Store) Occurrence(ctx context.Context, automation, key string) (store.Occurrence, error) {
	var got store.Occurrence
	err := s.view(ctx, "reading occurrence "+key+" of "+automation, func(tx *bolt.Tx) error {
		o, found, err := getOccurrence(tx, compositeKey(automation, key))
		if err == nil && !found {
			err = store.ErrNotFound
		}
		got = o
		return err
	})
	return got, err
}

// UpdateOccurrence replaces the stored occurrence when its Version is
// o.Version (else ErrConflict; ErrNotFound when there is none) and
// returns it as stored, with the next Version. Recorded and Claimed are
// the caller's to keep or change.
func (s *Store) UpdateOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, error) {
	o = o.Normal()
	what := "updating occurrence " + o.Key + " of " + o.Automation
	if err := o.Check(); err != nil {
		return store.Occurrence{}, fmt.Errorf("%s: %w", what, err)
	}
	var got store.Occurrence
	err := s.update(ctx, what, func(tx *bolt.Tx) error {
		k := compositeKey(o.Automation, o.Key)
		old, found, err := getOccurrence(tx, k)
		switch {
		case err != nil:
			return err
		case !found:
			return refuse(store.ErrNotFound)
		case old.Version != o.Version:
			return refuse(fmt.Errorf("%w: version %d is stored, the write read %d", store.ErrConflict, old.Version, o.Version))
		}
		got = o
		got.Version = o.Version + 1
		return putOccurrence(tx, k, old, got)
	})
	return got, err
}

// ClaimOccurrences takes on for owner, at now, up to limit occurrences in
// state whose Claimed is before `before` (oldest first), and returns
// them with Owner, Claimed and Version updated.
func (s *Store) ClaimOccurrences(ctx context.Context, state store.OccurrenceState, before time.Time, owner string, now time.Time, limit int) ([]store.Occurrence, error) {
	now = now.Truncate(time.Microsecond)
	var out []store.Occurrence
	err := s.update(ctx, "claiming "+string(state)+" occurrences", func(tx *bolt.Tx) error {
		out = nil // set anew if the transaction is retried
		pending, err := pendingIn(tx, "", state)
		if err != nil {
			return err
		}
		for _, o := range pending {
			if !o.Claimed.Before(before) {
				continue
			}
			out = append(out, o)
		}
		slices.SortStableFunc(out, func(a, b store.Occurrence) int { return a.Claimed.Compare(b.Claimed) })
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		for i, o := range out {
			taken := o
			taken.Owner, taken.Claimed, taken.Version = owner, now, o.Version+1
			if err := putOccurrence(tx, compositeKey(o.Automation, o.Key), o, taken); err != nil {
				return err
			}
			out[i] = taken
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Occurrences lists an automation's pending occurrences in state
// (recorded or queued), oldest Recorded first, at most limit (0: all).
func (s *Store) Occurrences(ctx context.Context, automation string, state store.OccurrenceState, limit int) ([]store.Occurrence, error) {
	var out []store.Occurrence
	if !state.Pending() {
		return nil, fmt.Errorf("%w: listing %s occurrences: only pending ones are listed", store.ErrInvalid, state)
	}
	err := s.view(ctx, "listing "+string(state)+" occurrences of "+automation, func(tx *bolt.Tx) error {
		var err error
		out, err = pendingIn(tx, automation, state)
		return err
	})
	slices.SortStableFunc(out, func(a, b store.Occurrence) int {
		return cmp.Or(a.Recorded.Compare(b.Recorded), cmp.Compare(a.Key, b.Key))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// SettledOccurrences lists up to limit occurrences recorded in [from,
// before) that are no longer pending, oldest Recorded first, without
// their Data: the candidates the engine's pruning looks at.
func (s *Store) SettledOccurrences(ctx context.Context, from, before time.Time, limit int) ([]store.Occurrence, error) {
	var out []store.Occurrence
	err := s.view(ctx, "listing settled occurrences", func(tx *bolt.Tx) error {
		pending := tx.Bucket(bucketPending)
		c := tx.Bucket(bucketOccByTime).Cursor()
		end := timeKey(before, nil)
		for k, _ := c.Seek(timeKey(from, nil)); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
			if len(k) < 8 || pending.Get(k[8:]) != nil {
				continue
			}
			o, found, err := getOccurrence(tx, k[8:])
			if err != nil {
				return err
			}
			if !found || o.State.Pending() {
				continue
			}
			o.Data = nil
			out = append(out, o)
			if limit > 0 && len(out) == limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ForgetOccurrences forgets each of olds that is still stored at its
// Version and is not pending (one a writer changed since it was read is
// kept), and returns how many it forgot.
func (s *Store) ForgetOccurrences(ctx context.Context, olds []store.Occurrence) (int, error) {
	n := 0
	err := s.update(ctx, "forgetting occurrences", func(tx *bolt.Tx) error {
		n = 0 // counted anew if the transaction is retried
		byTime, occs := tx.Bucket(bucketOccByTime), tx.Bucket(bucketOccurrences)
		for _, o := range olds {
			k := compositeKey(o.Automation, o.Key)
			old, found, err := getOccurrence(tx, k)
			if err != nil {
				return err
			}
			if !found || old.Version != o.Version || old.State.Pending() {
				continue
			}
			if err := errors.Join(byTime.Delete(timeKey(old.Recorded, k)), occs.Delete(k)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// AutomationState returns an automation's state, or ErrNotFound.
func (s *Store) AutomationState(ctx context.Context, name string) (store.AutomationState, error) {
	var st store.AutomationState
	err := s.view(ctx, "reading the state of automation "+name, func(tx *bolt.Tx) error {
		var found bool
		var err error
		st, found, err = getAutoState(tx, []byte(name))
		if err == nil && !found {
			err = store.ErrNotFound
		}
		return err
	})
	return st, err
}

// AutomationStates lists every automation's state, by name.
func (s *Store) AutomationStates(ctx context.Context) ([]store.AutomationState, error) {
	var out []store.AutomationState
	err := s.view(ctx, "listing automation states", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAutoStates).ForEach(func(k, _ []byte) error {
			st, _, err := getAutoState(tx, k)
			out = append(out, st)
			return err
		})
	})
	return out, err
}

// PutAutomationState writes st when the stored Version is st.Version (0:
// none stored yet), else ErrConflict, and returns it as stored.
func (s *Store) PutAutomationState(ctx context.Context, st store.AutomationState) (store.AutomationState, error) {
	what := "saving the state of automation " + st.Name
	if err := st.Check(); err != nil {
		return store.AutomationState{}, fmt.Errorf("%s: %w", what, err)
	}
	st = st.Normal()
	err := s.update(ctx, what, func(tx *bolt.Tx) error {
		old, found, err := getAutoState(tx, []byte(st.Name))
		if err != nil {
			return err
		}
		if stored := old.Version; (found && stored != st.Version) || (!found && st.Version != 0) {
			return refuse(fmt.Errorf("%w: version %d is stored, the write read %d", store.ErrConflict, stored, st.Version))
		}
		next := st
		next.Version = st.Version + 1
		return putAutoState(tx, next)
	})
	if err != nil {
		return store.AutomationState{}, err
	}
	st.Version++
	return st, nil
}

// AddAutomationSpend adds tokens to the automation's spend of day (a new
// day starts from zero), creating its state if need be, and returns the
// day's spend.
func (s *Store) AddAutomationSpend(ctx context.Context, name, day string, tokens int64) (int64, error) {
	what := "adding to the spend of automation " + name
	if err := (store.AutomationState{Name: name, Day: day}).Check(); err != nil || day == "" {
		return 0, fmt.Errorf("%w: %s: a name and a day are needed", store.ErrInvalid, what)
	}
	var spent int64
	err := s.update(ctx, what, func(tx *bolt.Tx) error {
		st, found, err := getAutoState(tx, []byte(name))
		if err != nil {
			return err
		}
		if !found {
			st = store.AutomationState{Name: name}
		}
		if st.Day != day {
			st.Day, st.Spent = day, 0
		}
		st.Spent += tokens
		st.Version++
		spent = st.Spent
		return putAutoState(tx, st)
	})
	return spent, err
}

// putOccurrence stores next in place of old (zero when new), keeping the
// pending and time indexes in step.
func putOccurrence(tx *bolt.Tx, k []byte, old, next store.Occurrence) error {
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrInvalid, err)
	}
	pending, byTime := tx.Bucket(bucketPending), tx.Bucket(bucketOccByTime)
	if next.State.Pending() {
		err = pending.Put(k, nil)
	} else {
		err = pending.Delete(k)
	}
	if err != nil {
		return err
	}
	if old.Version != 0 && !old.Recorded.Equal(next.Recorded) {
		if err := byTime.Delete(timeKey(old.Recorded, k)); err != nil {
			return err
		}
	}
	if err := byTime.Put(timeKey(next.Recorded, k), nil); err != nil {
		return err
	}
	return tx.Bucket(bucketOccurrences).Put(k, data)
}

func timeKey(t time.Time, k []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(max(t.UnixNano(), 0))), k...)
}

func getOccurrence(tx *bolt.Tx, k []byte) (store.Occurrence, bool, error) {
	v := tx.Bucket(bucketOccurrences).Get(k)
	if v == nil {
		return store.Occurrence{}, false, nil
	}
	var o store.Occurrence
	if err := json.Unmarshal(v, &o); err != nil {
		return store.Occurrence{}, false, fmt.Errorf("%w: occurrence %q: %w", store.ErrCorrupt, k, err)
	}
	return o, true, nil
}

// pendingIn decodes the pending occurrences of automation ("" for all)
// that are in state.
func pendingIn(tx *bolt.Tx, automation string, state store.OccurrenceState) ([]store.Occurrence, error) {
	var prefix []byte
	if automation != "" {
		prefix = compositeKey(automation, "")
	}
	var out []store.Occurrence
	c := tx.Bucket(bucketPending).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		o, found, err := getOccurrence(tx, k)
		if err != nil {
			return nil, err
		}
		if found && o.State == state {
			out = append(out, o)
		}
	}
	return out, nil
}

func getAutoState(tx *bolt.Tx, name []byte) (store.AutomationState, bool, error) {
	v := tx.Bucket(bucketAutoStates).Get(name)
	if v == nil {
		return store.AutomationState{}, false, nil
	}
	var st store.AutomationState
	if err := json.Unmarshal(v, &st); err != nil {
		return store.AutomationState{}, false, fmt.Errorf("%w: automation state %q: %w", store.ErrCorrupt, name, err)
	}
	return st, true, nil
}

func putAutoState(tx *bolt.Tx, st store.AutomationState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrInvalid, err)
	}
	return tx.Bucket(bucketAutoStates).Put([]byte(st.Name), data)
}

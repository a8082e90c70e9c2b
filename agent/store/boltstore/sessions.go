package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// envelope is how a bot session record is stored.
type envelope struct {
	Meta metaJSON        `json:"meta"`
	Data json.RawMessage `json:"data"`
}

type metaJSON struct {
	ID      string    `json:"id"`
	Team    string    `json:"team"`
	Channel string    `json:"channel"`
	Thread  string    `json:"thread"`
	Owner   string    `json:"owner"`
	Active  bool      `json:"active"`
	Updated time.Time `json:"updated"`
}

// PutSession stores a record and keeps every index in step with it: the
// thread, the owner and the active set. A thread holds one session: a
// record for a thread that another session id already has is ErrConflict.
func (s *Store) PutSession(ctx context.Context, rec store.SessionRecord) error {
	m := rec.Meta
	what := "saving session " + m.ID
	if err := m.Check(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !json.Valid(rec.Data) {
		return fmt.Errorf("%w: %s: data is not JSON", store.ErrInvalid, what)
	}
	data, err := json.Marshal(envelope{Meta: metaJSON(m), Data: rec.Data})
	if err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error { return putSession(tx, m, data) })
}

func putSession(tx *bolt.Tx, m store.SessionMeta, data []byte) error {
	id := []byte(m.ID)
	thread := compositeKey(m.Channel, m.Thread)
	if other := tx.Bucket(bucketThreads).Get(thread); other != nil && !bytes.Equal(other, id) {
		return fmt.Errorf("%w: thread %s/%s belongs to session %s", store.ErrConflict, m.Channel, m.Thread, other)
	}
	if err := dropStaleIndexes(tx, m); err != nil {
		return err
	}
	if err := tx.Bucket(bucketThreads).Put(thread, id); err != nil {
		return err
	}
	if err := tx.Bucket(bucketOwners).Put(compositeKey(m.Owner, m.ID), nil); err != nil {
		return err
	}
	active := tx.Bucket(bucketActive)
	if m.Active {
		err := active.Put(id, nil)
		if err != nil {
			return err
		}
	} else if err := active.Delete(id); err != nil {
		return err
	}
	return tx.Bucket(bucketSessions).Put(id, data)
}

// dropStaleIndexes removes the thread and owner entries of the record's
// previous version when they changed.
func dropStaleIndexes(tx *bolt.Tx, m store.SessionMeta) error {
	old, found, err := getSession(tx, []byte(m.ID))
	if err != nil || !found {
		return err
	}
	if old.Meta.Channel != m.Channel || old.Meta.Thread != m.Thread {
		if err := tx.Bucket(bucketThreads).Delete(compositeKey(old.Meta.Channel, old.Meta.Thread)); err != nil {
			return err
		}
	}
	if old.Meta.Owner != m.Owner {
		return tx.Bucket(bucketOwners).Delete(compositeKey(old.Meta.Owner, m.ID))
	}
	return nil
}

// FindThread returns the session of a thread, or ErrNotFound.
func (s *Store) FindThread(ctx context.Context, channel, thread string) (store.SessionRecord, error) {
	var rec store.SessionRecord
	what := "finding the session of thread " + channel + "/" + thread
	err := s.view(ctx, what, func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketThreads).Get(compositeKey(channel, thread))
		if id == nil {
			return store.ErrNotFound
		}
		var found bool
		var err error
		rec, found, err = getSession(tx, id)
		if err == nil && !found {
			err = fmt.Errorf("%w: thread index names session %s, which is missing", store.ErrCorrupt, id)
		}
		return err
	})
	return rec, err
}

// ListChannel returns the sessions of a channel, oldest thread first.
func (s *Store) ListChannel(ctx context.Context, channel string) ([]store.SessionRecord, error) {
	var out []store.SessionRecord
	err := s.view(ctx, "listing channel "+channel, func(tx *bolt.Tx) error {
		var err error
		out, err = scanIndex(tx, bucketThreads, compositeKey(channel, ""), func(_, v []byte) []byte { return v })
		return err
	})
	return out, err
}

// ListOwner returns the sessions owner started, most recently updated
// first (then the newest thread first), at most limit (0: all).
func (s *Store) ListOwner(ctx context.Context, owner string, limit int) ([]store.SessionRecord, error) {
	var out []store.SessionRecord
	err := s.view(ctx, "listing the sessions of "+owner, func(tx *bolt.Tx) error {
		prefix := compositeKey(owner, "")
		var err error
		out, err = scanIndex(tx, bucketOwners, prefix, func(k, _ []byte) []byte { return k[len(prefix):] })
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b store.SessionRecord) int {
		return cmp.Or(b.Meta.Updated.Compare(a.Meta.Updated), strings.Compare(b.Meta.Thread, a.Meta.Thread))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ListActive returns the metadata of every active session, in id order.
func (s *Store) ListActive(ctx context.Context) ([]store.SessionMeta, error) {
	var out []store.SessionMeta
	err := s.view(ctx, "listing active sessions", func(tx *bolt.Tx) error {
		recs, err := scanIndex(tx, bucketActive, nil, func(k, _ []byte) []byte { return k })
		for _, r := range recs {
			out = append(out, r.Meta)
		}
		return err
	})
	return out, err
}

// scanIndex loads the records an index names under prefix, in key order;
// id picks the session id out of an entry.
func scanIndex(tx *bolt.Tx, index, prefix []byte, id func(k, v []byte) []byte) ([]store.SessionRecord, error) {
	var out []store.SessionRecord
	c := tx.Bucket(index).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		rec, found, err := getSession(tx, id(k, v))
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, rec)
		}
	}
	return out, nil
}

// getSession decodes the record stored under id.
func getSession(tx *bolt.Tx, id []byte) (store.SessionRecord, bool, error) {
	v := tx.Bucket(bucketSessions).Get(id)
	if v == nil {
		return store.SessionRecord{}, false, nil
	}
	var e envelope
	if err := json.Unmarshal(v, &e); err != nil { // copies out of the mmap
		return store.SessionRecord{}, false, fmt.Errorf("%w: session %s: %w", store.ErrCorrupt, id, err)
	}
	return store.SessionRecord{Meta: store.SessionMeta(e.Meta), Data: e.Data}, true, nil
}

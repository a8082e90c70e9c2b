package bot

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/groupcommit"
)

var (
	// bucketSessions: session id ("team/channel/threadTS") → JSON Session.
	bucketSessions = []byte("bot_sessions")
	// bucketActive: ids of sessions a restart must act on (running or
	// waiting for a step approval), so start-up does not decode every
	// session ever created.
	bucketActive = []byte("bot_active")
)

// store persists sessions in the shared bbolt file.
type store struct{ db *bolt.DB }

func newStore(db *bolt.DB) (*store, error) {
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketSessions, bucketActive} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: creating buckets: %w", ErrStore, err)
	}
	return &store{db: db}, nil
}

// get loads one session; (nil, nil) when there is none.
func (s *store) get(id string) (*Session, error) {
	var rec *Session
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketSessions).Get([]byte(id))
		if v == nil {
			return nil
		}
		rec = new(Session)
		return json.Unmarshal(v, rec) // decodes from the mmap inside the tx
	})
	if err != nil {
		return nil, fmt.Errorf("%w: loading session %s: %w", ErrStore, id, err)
	}
	return rec, nil
}

// put saves a session and keeps the active index in step.
func (s *store) put(rec *Session) error { return s.writer(rec)() }

// writer encodes rec now and returns its commit, so the commit can run
// while the caller goes on (and changes rec).
func (s *store) writer(rec *Session) func() error {
	id, active := rec.ID, rec.active()
	data, err := json.Marshal(rec)
	if err != nil {
		return func() error { return fmt.Errorf("%w: encoding session %s: %w", ErrStore, id, err) }
	}
	return func() error { return s.write(id, data, active) }
}

// write stores one encoded session and its place in the active index.
func (s *store) write(id string, data []byte, active bool) error {
	// Shared with concurrent writers (group commit), e.g. other sessions' steps.
	err := groupcommit.Update(s.db, func(tx *bolt.Tx) error {
		key := []byte(id)
		if err := tx.Bucket(bucketSessions).Put(key, data); err != nil {
			return err
		}
		if active {
			return tx.Bucket(bucketActive).Put(key, nil)
		}
		return tx.Bucket(bucketActive).Delete(key)
	})
	if err != nil {
		return fmt.Errorf("%w: saving session %s: %w", ErrStore, id, err)
	}
	return nil
}

// channel lists the sessions of one channel (key order, i.e. oldest thread first).
func (s *store) channel(team, channel string) ([]*Session, error) {
	prefix := []byte(channelPrefix(team, channel))
	var out []*Session
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSessions).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			rec := new(Session)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("decoding %s: %w", k, err)
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: listing channel %s: %w", ErrStore, channel, err)
	}
	return out, nil
}

// activeIDs lists the sessions that were running or waiting for an approval.
func (s *store) activeIDs() ([]string, error) {
	var ids []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketActive).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: listing active sessions: %w", ErrStore, err)
	}
	return ids, nil
}

package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// prepare creates the buckets and brings an older file to the current
// schema, in one transaction: a crash leaves the file as it was.
func prepare(tx *bolt.Tx) error {
	var schema []byte
	if b := tx.Bucket(bucketMeta); b != nil {
		schema = b.Get(keySchema)
	}
	switch {
	case bytes.Equal(schema, currentSchema):
		return createBuckets(tx) // buckets added since the file was made (bot_starts, automation_*)
	case schema != nil:
		return fmt.Errorf("%w: schema %q was written by a newer h9", store.ErrCorrupt, schema)
	}
	// No schema: a new file, or one written before schemas (schema 1),
	// recognised by its buckets.
	legacy := tx.Bucket(bucketAgent) != nil || tx.Bucket(bucketSessions) != nil || tx.Bucket(bucketDedup) != nil
	if err := createBuckets(tx); err != nil {
		return err
	}
	if legacy {
		if err := migrateV1(tx); err != nil {
			return fmt.Errorf("migrating from schema 1: %w", err)
		}
	}
	return tx.Bucket(bucketMeta).Put(keySchema, currentSchema)
}

// createBuckets makes every bucket the schema has that the file lacks.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// migrateV1 converts schema 1, h9's layout before the storage seams:
// agent sessions kept "usage" (now the opaque "state") and their "mode"
// (now the bot's alone); bot sessions were the bot's bare JSON (now an
// envelope with indexed metadata); dedup keys had no lookup bucket.
func migrateV1(tx *bolt.Tx) error {
	return errors.Join(migrateAgentV1(tx), migrateSessionsV1(tx), migrateDedupV1(tx))
}

var (
	keyUsageV1 = []byte("usage")
	keyModeV1  = []byte("mode")
)

func migrateAgentV1(tx *bolt.Tx) error {
	parent := tx.Bucket(bucketAgent)
	var ids [][]byte // collected first: changing a nested bucket can rewrite the parent
	if err := parent.ForEachBucket(func(k []byte) error { ids = append(ids, bytes.Clone(k)); return nil }); err != nil {
		return err
	}
	for _, id := range ids {
		b := parent.Bucket(id)
		if usage := b.Get(keyUsageV1); usage != nil && b.Get(keyState) == nil {
			if err := b.Put(keyState, bytes.Clone(usage)); err != nil {
				return err
			}
		}
		if err := errors.Join(b.Delete(keyUsageV1), b.Delete(keyModeV1)); err != nil {
			return err
		}
	}
	return nil
}

// sessionV1 is the part of a schema 1 bot record that became metadata.
type sessionV1 struct {
	ID       string    `json:"id"`
	Team     string    `json:"team"`
	Channel  string    `json:"channel"`
	ThreadTS string    `json:"thread_ts"`
	Owner    string    `json:"owner"`
	Updated  time.Time `json:"updated"`
}

func migrateSessionsV1(tx *bolt.Tx) error {
	type legacy struct {
		meta store.SessionMeta
		data []byte
	}
	var recs []legacy
	active := tx.Bucket(bucketActive)
	err := tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var old sessionV1
		if json.Unmarshal(v, &old) != nil || old.Channel == "" || old.ThreadTS == "" {
			return nil // unreadable before too; left as it was
		}
		m := store.SessionMeta{ID: string(k), Team: old.Team, Channel: old.Channel, Thread: old.ThreadTS,
			Owner: old.Owner, Updated: old.Updated, Active: active.Get(k) != nil}
		recs = append(recs, legacy{meta: m, data: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := migrateSessionV1(tx, r.meta, r.data); err != nil {
			return err
		}
	}
	return nil
}

// migrateSessionV1 stores one record in the new form. Schema 1 could hold
// two sessions for one thread (made under different teams, when auth.test
// failed on one start); the thread then goes to the newer one.
func migrateSessionV1(tx *bolt.Tx, m store.SessionMeta, data []byte) error {
	if other := tx.Bucket(bucketThreads).Get(compositeKey(m.Channel, m.Thread)); other != nil && string(other) != m.ID {
		prev, found, err := getSession(tx, other)
		if err != nil {
			return err
		}
		if found && !m.Updated.After(prev.Meta.Updated) {
			m.Active = false // kept, but no longer reachable from its thread
			if err := tx.Bucket(bucketActive).Delete([]byte(m.ID)); err != nil {
				return err
			}
			return tx.Bucket(bucketSessions).Put([]byte(m.ID), mustEnvelope(m, data))
		}
		if err := tx.Bucket(bucketThreads).Delete(compositeKey(m.Channel, m.Thread)); err != nil {
			return err
		}
	}
	return putSession(tx, m, mustEnvelope(m, data))
}

func mustEnvelope(m store.SessionMeta, data []byte) []byte {
	out, _ := json.Marshal(envelope{Meta: metaJSON(m), Data: data}) // data came from json.Unmarshal: valid
	return out
}

func migrateDedupV1(tx *bolt.Tx) error {
	order, lookup := tx.Bucket(bucketDedup), tx.Bucket(bucketDedupKeys)
	n := 0
	err := order.ForEach(func(k, _ []byte) error {
		if len(k) < 8 {
			return nil
		}
		n++
		return lookup.Put(bytes.Clone(k[8:]), bytes.Clone(k[:8]))
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyDedupCount, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

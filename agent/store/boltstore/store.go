// Package boltstore is h9's bbolt backend: one Store implements every
// storage interface the agent and the bot declare (agent.Store, bot.Store),
// in one bbolt file, with the writes of all sessions sharing group commits.
//
// Layout (schema 2; New migrates a schema 1 file, see migrate.go):
//
//	h9_meta          "schema" → "2"; "dedup_count" → number of claimed keys
//	agent_sessions   <session id>/ → "todos" (JSON), "state" (the agent's blob),
//	                 and a bucket "msgs": 8-byte big-endian index → message
//	bot_sessions     session id → {"meta": SessionMeta, "data": the bot's JSON}
//	bot_threads      channel NUL thread → session id
//	bot_owners       owner NUL session id → ""
//	bot_active       session id → ""   (the sessions a restart must act on)
//	bot_dedup        8-byte big-endian unix nanos + key → ""   (claim order)
//	bot_dedup_keys   key → 8-byte big-endian unix nanos        (lookup)
//	bot_channels     channel NUL setting → value
//	bot_starts       start ID → Start (JSON)
//	automation_*     occurrences and automation states (automations.go)
//
// Values are copied out of bbolt's memory inside each transaction.
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/h9-app/h9/agent/store"
	bolt "go.etcd.io/bbolt"
)

var (
	bucketMeta      = []byte("h9_meta")
	bucketAgent     = []byte("agent_sessions")
	bucketMsgs      = []byte("msgs")
	bucketSessions  = []byte("bot_sessions")
	bucketThreads   = []byte("bot_threads")
	bucketOwners    = []byte("bot_owners")
	bucketActive    = []byte("bot_active")
	bucketDedup     = []byte("bot_dedup")
	bucketDedupKeys = []byte("bot_dedup_keys")
	bucketChannels  = []byte("bot_channels")
	bucketStarts    = []byte("bot_starts")
	keySchema       = []byte("schema")
	keyDedupCount   = []byte("dedup_count")
	keyTodos        = []byte("todos")
	keyState        = []byte("state")
	allBuckets      = [][]byte{bucketMeta, bucketAgent, bucketSessions, bucketThreads, bucketOwners, bucketActive, bucketDedup, bucketDedupKeys, bucketChannels, bucketStarts,
		bucketOccurrences, bucketPending, bucketOccByTime, bucketAutoStates}
	currentSchema      = []byte("2")
	keySeparator  byte = 0 // between the parts of a composite key
)

// Store is the bbolt backend. It is safe for concurrent use. It does not
// own the *bolt.DB: whoever opened it closes it.
type Store struct {
	db     *bolt.DB
	commit *group
	tokens atomic.Int64 // the leases' tokens (lease.go)
}

// New prepares db (creating buckets, migrating an older layout) and
// returns the Store on it. Opening is idempotent: a file already at the
// current schema is left as it is.
func New(db *bolt.DB) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: no database", store.ErrInvalid)
	}
	if err := db.Update(prepare); err != nil {
		return nil, fmt.Errorf("%w: preparing %s: %w", store.ErrBackend, db.Path(), err)
	}
	return &Store{db: db, commit: &group{db: db}}, nil
}

// update runs fn in a write transaction shared with concurrent writers
// (group commit), unless ctx is already done. what names the write in errors.
func (s *Store) update(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrBackend, what, err)
	}
	if err := s.commit.update(fn); err != nil {
		return wrap(what, err)
	}
	return nil
}

// view runs fn in a read transaction, unless ctx is already done.
func (s *Store) view(ctx context.Context, what string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrBackend, what, err)
	}
	if err := s.db.View(fn); err != nil {
		return wrap(what, err)
	}
	return nil
}

// wrap names the failed operation and keeps the store sentinel a
// transaction function returned, or marks a bbolt failure ErrBackend.
func wrap(what string, err error) error {
	if isStoreError(err) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%w: %s: %w", store.ErrBackend, what, err)
}

func isStoreError(err error) bool {
	for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid, store.ErrCorrupt, store.ErrBackend} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}

// compositeKey joins key parts with a separator no Slack id contains, so
// one channel's prefix never matches another's ("C1" and "C10").
func compositeKey(parts ...string) []byte {
	var k []byte
	for i, p := range parts {
		if i > 0 {
			k = append(k, keySeparator)
		}
		k = append(k, p...)
	}
	return k
}

// Ping reports whether the store answers: a read transaction that finds
// the schema. It fails once the database is closed (h9's readiness check).
func (s *Store) Ping(ctx context.Context) error {
	return s.view(ctx, "ping", func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta).Get(keySchema) == nil {
			return fmt.Errorf("%w: no schema version", store.ErrCorrupt)
		}
		return nil
	})
}

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

// ChannelSetting returns one setting of a channel ("" when unset).
func (s *Store) ChannelSetting(ctx context.Context, channel, key string) (string, error) {
	var value string
	err := s.view(ctx, "reading setting "+key+" of channel "+channel, func(tx *bolt.Tx) error {
		value = string(tx.Bucket(bucketChannels).Get(compositeKey(channel, key)))
		return nil
	})
	return value, err
}

// SetChannelSetting sets one setting of a channel; "" removes it.
func (s *Store) SetChannelSetting(ctx context.Context, channel, key, value string) error {
	what := "saving setting " + key + " of channel " + channel
	if channel == "" || key == "" || strings.IndexByte(channel, keySeparator) >= 0 {
		return fmt.Errorf("%w: %s: empty or malformed channel or key", store.ErrInvalid, what)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		b, k := tx.Bucket(bucketChannels), compositeKey(channel, key)
		if value == "" {
			return b.Delete(k)
		}
		return b.Put(k, []byte(value))
	})
}

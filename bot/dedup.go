package bot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/groupcommit"
)

const (
	// dedupSize bounds the seen keys, in memory and on disk. Slack redelivers
	// within minutes, so the last few thousand envelopes and messages are plenty.
	dedupSize = 20000
	// dedupTTL is how long a key is remembered across restarts: Slack's
	// retries of an event end well within an hour.
	dedupTTL = 24 * time.Hour
	// dedupPruneSlack lets the bucket grow a little past dedupSize before a
	// prune, so pruning is one cursor sweep now and then, not one per key.
	dedupPruneSlack = 1000
)

// bucketDedup holds seen keys across restarts: key = 8-byte big-endian unix
// nanoseconds + the dedup key, value empty. Time order makes expiry and
// bounding a sweep from the front.
var bucketDedup = []byte("bot_dedup")

// dedup remembers recently seen keys: envelope ids, event ids, and
// channel+ts of messages (Slack sends a mention as app_mention AND message).
// The check is in memory; new keys are written to bbolt by a background
// flusher in batches, so the socket loop never waits for an fsync, and a
// restart reloads them so a redelivery after a crash is still dropped.
type dedup struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string // insertion order, for eviction
	next int

	db      *bolt.DB // nil: memory only
	log     *slog.Logger
	pending [][]byte // encoded bucket keys not yet written
	onDisk  int      // approximate count of keys in the bucket
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	now     func() time.Time
}

// newDedup loads the unexpired keys of db (nil for memory only).
func newDedup(db *bolt.DB, log *slog.Logger) (*dedup, error) {
	d := &dedup{
		seen: make(map[string]struct{}, dedupSize), ring: make([]string, dedupSize),
		db: db, log: log, kick: make(chan struct{}, 1), now: time.Now,
	}
	if db == nil {
		return d, nil
	}
	if err := d.load(); err != nil {
		return nil, fmt.Errorf("%w: loading seen events: %w", ErrStore, err)
	}
	return d, nil
}

// load drops expired keys from the bucket and remembers the rest.
func (d *dedup) load() error {
	cutoff := d.now().Add(-dedupTTL).UnixNano()
	return d.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketDedup)
		if err != nil {
			return err
		}
		// Collect first: deleting under a cursor can make Next skip a key.
		var expired [][]byte
		c := bk.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) < 8 || int64(binary.BigEndian.Uint64(k)) < cutoff {
				expired = append(expired, bytes.Clone(k))
				continue
			}
			d.remember(string(k[8:])) // string() copies out of the mmap
			d.onDisk++
		}
		return deleteKeys(bk, expired)
	})
}

// start runs the flusher until close.
func (d *dedup) start() {
	if d.db == nil || d.stop != nil {
		return
	}
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go d.flushLoop()
}

// close writes what is pending and stops the flusher.
func (d *dedup) close() {
	if d.stop == nil {
		return
	}
	close(d.stop)
	<-d.done
	d.stop = nil
}

// first records key and reports whether it was new. An empty key is always new.
func (d *dedup) first(key string) bool {
	if key == "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; ok {
		return false
	}
	d.remember(key)
	if d.db != nil {
		k := make([]byte, 8, 8+len(key))
		binary.BigEndian.PutUint64(k, uint64(d.now().UnixNano()))
		d.pending = append(d.pending, append(k, key...))
		select {
		case d.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// has reports whether key was seen, without recording it.
func (d *dedup) has(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.seen[key]
	return ok
}

// remember adds key to memory, evicting the oldest. Caller holds mu (or owns d).
func (d *dedup) remember(key string) {
	if old := d.ring[d.next]; old != "" {
		delete(d.seen, old)
	}
	d.ring[d.next] = key
	d.next = (d.next + 1) % len(d.ring)
	d.seen[key] = struct{}{}
}

func (d *dedup) flushLoop() {
	defer close(d.done)
	for {
		select {
		case <-d.kick:
			d.flush()
		case <-d.stop:
			d.flush()
			return
		}
	}
}

// flush writes the pending keys and bounds the bucket. The write shares
// the sessions' group commit: under a burst of events a commit of its own
// per batch queued behind (and held up) theirs on bbolt's single writer.
// A failure is logged and the keys stay in memory: dedup within this
// process still works.
func (d *dedup) flush() {
	d.mu.Lock()
	batch := d.pending
	d.pending = nil
	d.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	var onDisk int
	err := groupcommit.Update(d.db, func(tx *bolt.Tx) error {
		onDisk = d.onDisk + len(batch) // set anew if the transaction is retried
		bk := tx.Bucket(bucketDedup)
		for _, k := range batch {
			if err := bk.Put(k, nil); err != nil {
				return err
			}
		}
		if onDisk > dedupSize+dedupPruneSlack {
			n, err := d.prune(bk, onDisk)
			onDisk -= n
			return err
		}
		return nil
	})
	if err != nil {
		d.log.Error("persisting seen events", "err", err, "keys", len(batch))
		return
	}
	d.onDisk = onDisk // the flusher's own count: only it writes the bucket
}

// prune deletes the oldest keys (and any expired) of the onDisk in the
// bucket down to dedupSize, and returns how many it deleted.
func (d *dedup) prune(bk *bolt.Bucket, onDisk int) (int, error) {
	cutoff := make([]byte, 8)
	binary.BigEndian.PutUint64(cutoff, uint64(d.now().Add(-dedupTTL).UnixNano()))
	var old [][]byte
	c := bk.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if onDisk-len(old) <= dedupSize && bytes.Compare(k, cutoff) >= 0 {
			break
		}
		old = append(old, bytes.Clone(k))
	}
	return len(old), deleteKeys(bk, old)
}

func deleteKeys(bk *bolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := bk.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

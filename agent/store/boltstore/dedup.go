package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// dedupSlack lets the claims grow this far past store.DedupLimit before a
// prune, so pruning is one cursor sweep now and then, not one per key.
const dedupSlack = store.DedupLimit / 20

// Claim records keys as seen at `at` and reports, for each, whether it was
// fresh: not claimed within store.DedupTTL before `at`. A key listed twice
// is fresh only the first time. The claims stay bounded (store.DedupLimit).
func (s *Store) Claim(ctx context.Context, keys []string, at time.Time) ([]bool, error) {
	fresh := make([]bool, len(keys))
	err := s.update(ctx, fmt.Sprintf("claiming %d dedup keys", len(keys)), func(tx *bolt.Tx) error {
		clear(fresh) // set anew if the transaction is retried
		return claim(tx, keys, at, fresh)
	})
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

func claim(tx *bolt.Tx, keys []string, at time.Time, fresh []bool) error {
	order, lookup := tx.Bucket(bucketDedup), tx.Bucket(bucketDedupKeys)
	cutoff := at.Add(-store.DedupTTL).UnixNano()
	n := dedupCount(tx)
	for i, key := range keys {
		k := []byte(key)
		if v := lookup.Get(k); len(v) == 8 {
			t := int64(binary.BigEndian.Uint64(v))
			if t > cutoff {
				continue // seen
			}
			if err := order.Delete(orderKey(t, k)); err != nil { // expired: claimed anew below
				return err
			}
			n--
		}
		fresh[i] = true
		stamp := binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
		if err := order.Put(orderKey(at.UnixNano(), k), nil); err != nil {
			return err
		}
		if err := lookup.Put(k, stamp); err != nil {
			return err
		}
		n++
	}
	if n > store.DedupLimit+dedupSlack {
		pruned, err := prune(order, lookup, n, cutoff)
		if err != nil {
			return err
		}
		n -= pruned
	}
	return setDedupCount(tx, n)
}

// prune deletes the oldest claims (and any expired) of the n stored, down
// to store.DedupLimit, and returns how many it deleted.
func prune(order, lookup *bolt.Bucket, n int, cutoff int64) (int, error) {
	var old [][]byte // collected first: deleting under a cursor can skip keys
	c := order.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if n-len(old) <= store.DedupLimit && len(k) >= 8 && int64(binary.BigEndian.Uint64(k)) > cutoff {
			break
		}
		old = append(old, bytes.Clone(k))
	}
	for _, k := range old {
		if err := order.Delete(k); err != nil {
			return 0, err
		}
		if len(k) < 8 {
			continue
		}
		// Only when the lookup still points at this claim (not a newer one).
		if v := lookup.Get(k[8:]); bytes.Equal(v, k[:8]) {
			if err := lookup.Delete(k[8:]); err != nil {
				return 0, err
			}
		}
	}
	return len(old), nil
}

// Claimed returns the keys claimed at or after since, oldest claim first.
func (s *Store) Claimed(ctx context.Context, since time.Time) ([]string, error) {
	var keys []string
	err := s.view(ctx, "listing dedup keys", func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketDedup).Cursor()
		start := binary.BigEndian.AppendUint64(nil, uint64(max(since.UnixNano(), 0)))
		for k, _ := c.Seek(start); k != nil; k, _ = c.Next() {
			if len(k) >= 8 {
				keys = append(keys, string(k[8:])) // string() copies out of the mmap
			}
		}
		return nil
	})
	return keys, err
}

// orderKey is a claim's key in claim order: the time, then the key.
func orderKey(unixNano int64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(unixNano)), key...)
}

func dedupCount(tx *bolt.Tx) int {
	v := tx.Bucket(bucketMeta).Get(keyDedupCount)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func setDedupCount(tx *bolt.Tx, n int) error {
	return tx.Bucket(bucketMeta).Put(keyDedupCount, binary.BigEndian.AppendUint64(nil, uint64(max(n, 0))))
}

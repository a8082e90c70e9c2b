package boltstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// PutStart records a new session's command (by its ID, replacing one of
// the same ID).
func (s *Store) PutStart(ctx context.Context, st store.Start) error {
	what := "recording the start " + st.ID
	if st.ID == "" || st.Channel == "" || !json.Valid(st.Data) {
		return fmt.Errorf("%w: %s: an ID, a channel and JSON data are needed", store.ErrInvalid, what)
	}
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", store.ErrInvalid, what, err)
	}
	return s.update(ctx, what, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStarts).Put([]byte(st.ID), data)
	})
}

// Starts lists the recorded starts, oldest first.
func (s *Store) Starts(ctx context.Context) ([]store.Start, error) {
	var out []store.Start
	err := s.view(ctx, "listing starts", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStarts).ForEach(func(_, v []byte) error {
			var st store.Start
			if err := json.Unmarshal(v, &st); err != nil {
				return fmt.Errorf("%w: a start: %v", store.ErrCorrupt, err)
			}
			out = append(out, st)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b store.Start) int { return a.At.Compare(b.At) })
	return out, err
}

// DeleteStart forgets a start; one already gone is no error.
func (s *Store) DeleteStart(ctx context.Context, id string) error {
	return s.update(ctx, "forgetting the start "+id, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketStarts).Delete([]byte(id))
	})
}

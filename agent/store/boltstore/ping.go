package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

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

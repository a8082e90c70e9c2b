package h9test

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store/boltstore"
)

// OpenBolt opens the data directory dir's h9.db as h9 does; the caller
// closes it, after the bot on it has stopped.
func OpenBolt(tb testing.TB, dir string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(dir, "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// BoltStore builds the store on db, as h9 does at each start.
func BoltStore(tb testing.TB, db *bolt.DB) *boltstore.Store {
	tb.Helper()
	st, err := boltstore.New(db)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

package boltstore

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store/storetest"
)

// openFile opens (or reopens) the bbolt file at path as a Store, closed
// when the test ends.
func openFile(t *testing.T, path string) (*Store, *bolt.DB) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Backend, storetest.Reopen) {
		path := filepath.Join(t.TempDir(), "h9.db")
		s, db := openFile(t, path)
		return s, func(t *testing.T) storetest.Backend {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			s, db = openFile(t, path)
			return s
		}
	})
}

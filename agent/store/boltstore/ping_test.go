package boltstore

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/agent/store"
)

// A closed database does not answer: h9's /readyz turns 503 on it.
func TestPingFailsOnceTheDatabaseIsClosed(t *testing.T) {
	s, db := openFile(t, filepath.Join(t.TempDir(), "h9.db"))
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("ping of an open store: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); !errors.Is(err, store.ErrBackend) {
		t.Fatalf("ping of a closed store = %v, want ErrBackend", err)
	}
}

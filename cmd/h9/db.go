package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/h9-app/h9/agent/store/boltstore"
)

const (
	dbFile = "h9.db"
	// dbLockTimeout bounds the wait for bbolt's file lock: a second h9 on the same
	// data directory fails fast instead of hanging.
	dbLockTimeout = 2 * time.Second
)

// openDB opens (creating if needed) $H9_DATA_DIR/h9.db.
func openDB(dataDir string, timeout time.Duration) (*bolt.DB, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	path := filepath.Join(dataDir, dbFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, lineErrorf(ErrDataDirLocked, "another h9 is already using %s (%s is locked)", dataDir, dbFile)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// openStore opens h9.db and the store on it (migrating an older file).
func openStore(dataDir string) (*bolt.DB, *boltstore.Store, error) {
	db, err := openDB(dataDir, dbLockTimeout)
	if err != nil {
		return nil, nil, err
	}
	st, err := boltstore.New(db)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	return db, st, nil
}

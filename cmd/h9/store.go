package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/bot"
)

const (
	dbFile = "h9.db"
	// dbLockTimeout bounds the wait for bbolt's file lock: a second h9 on the same
	// data directory fails fast instead of hanging.
	dbLockTimeout = 2 * time.Second
	// dbConnectTimeout bounds connecting to PostgreSQL and migrating at start.
	dbConnectTimeout = 30 * time.Second
)

// backend is the storage h9 runs on: every method the agent and the bot
// call, whichever backend serves them.
type backend interface {
	agent.Store
	bot.Store
	bot.Leases
	Ping(ctx context.Context) error // the readiness check's
}

// storage is the open backend, what to call it in logs, and how to close it.
type storage struct {
	backend
	fleet   bot.Fleet // nil with bbolt: one process
	kind    string    // "bbolt" or "postgres"
	replica string    // this process's name in the fleet ("" with bbolt)
	close   func() error
}

// openStorage opens PostgreSQL when H9_DATABASE_URL is set (migrating its
// schema) as one replica of a fleet, else $H9_DATA_DIR/h9.db.
// leaseChanged, when set, counts the replica's lease changes (metrics).
func openStorage(ctx context.Context, cfg Config, log *slog.Logger, leaseChanged func(store.LeaseChange, int)) (storage, error) {
	if cfg.DatabaseURL == "" {
		db, st, err := openStore(cfg.DataDir)
		if err != nil {
			return storage{}, err
		}
		return storage{backend: st, kind: "bbolt", close: db.Close}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, dbConnectTimeout)
	defer cancel()
	replica := replicaName()
	st, err := pgstore.Open(ctx, cfg.DatabaseURL, pgstore.Options{
		Replica: replica, LeaseTTL: cfg.LeaseTTL, Logger: log.With("component", "store"), OnLeaseChange: leaseChanged,
	})
	if err != nil {
		return storage{}, databaseError(err, cfg.DatabaseURL)
	}
	return storage{backend: st, fleet: st, kind: "postgres", replica: replica, close: func() error { st.Close(); return nil }}, nil
}

// replicaName names this process among the fleet's replicas: the host
// and pid for an operator, and random bytes so that a restarted process
// never passes for its predecessor (whose leases it must not inherit).
func replicaName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "h9"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:8])
}

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

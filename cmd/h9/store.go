package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/bot/automation"
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
	automation.Store                // the automations' occurrences and states (ARCHITECTURE.md, "Automations")
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

// minLeaseTTL keeps renewals (three per TTL) from turning into a busy loop.
const minLeaseTTL = time.Second

// checkDatabaseURL accepts an empty H9_DATABASE_URL (bbolt) or one pgx
// can parse. The value is never quoted back: it may carry a password.
func checkDatabaseURL(v string) error {
	if v == "" {
		return nil
	}
	if err := pgstore.CheckURL(v); err != nil {
		return invalid("H9_DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:5432/database) or key=value string")
	}
	return nil
}

func atLeast(name string, v, least time.Duration) error {
	if v < least {
		return invalid("%s must be at least %s (got %s)", name, least, v)
	}
	return nil
}

// checkDatabase connects to H9_DATABASE_URL and reads its schema version,
// changing nothing: migrations run when h9 starts.
func checkDatabase(ctx context.Context, cfg Config) finding {
	if cfg.DatabaseURL == "" {
		return ok("bbolt in %s/%s (set H9_DATABASE_URL to run replicas on PostgreSQL)", cfg.DataDir, dbFile)
	}
	v, err := pgstore.SchemaVersion(ctx, cfg.DatabaseURL)
	switch {
	case err != nil && notPostgres(err):
		return failed("fix H9_DATABASE_URL's host and port: they name another service", "the server at H9_DATABASE_URL does not answer as PostgreSQL")
	case err != nil:
		return failed("check H9_DATABASE_URL (host, port, database, user, password) and that PostgreSQL is up", "%s", oneLine(err))
	case v > pgstore.CurrentSchema:
		return failed("upgrade this h9: a newer one migrated the database",
			"PostgreSQL has schema %d, newer than this h9's %d", v, pgstore.CurrentSchema)
	case v == 0:
		return ok("PostgreSQL answers; the database is empty and h9 creates schema %d at start", pgstore.CurrentSchema)
	case v < pgstore.CurrentSchema:
		return ok("PostgreSQL answers with schema %d; h9 migrates it to %d at start", v, pgstore.CurrentSchema)
	}
	return ok("PostgreSQL answers with schema %d, this h9's", v)
}

// oneLine folds a multi-line error (pgx's, one line per address tried;
// git's last stderr lines) into the finding's single line.
func oneLine(err error) string {
	lines := strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ; "))
	return strings.ReplaceAll(strings.Join(lines, " "), " ; ", "; ")
}

// databaseError is a failure to open H9_DATABASE_URL as one line naming
// the variable and the fix, instead of pgx's line per address tried. A
// refused login or a missing database is a setting (exit 2); a server
// that cannot be reached is an outage (exit 1).
func databaseError(err error, dsn string) error {
	where := "the database"
	if cfg, perr := pgconn.ParseConfig(dsn); perr == nil {
		where = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case notPostgres(err):
		return invalid("H9_DATABASE_URL: %s does not answer as PostgreSQL (another service's port?): fix the URL's host and port", where)
	case errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28"):
		return invalid("H9_DATABASE_URL: %s refused the login (%s): check the user and password in the URL", where, pgErr.Message)
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return invalid("H9_DATABASE_URL: %s: %s: create it (createdb) or fix the URL's database name", where, pgErr.Message)
	case errors.As(err, &dnsErr):
		return invalid("H9_DATABASE_URL: the host %q is not known: fix the URL's host", dnsErr.Name)
	case errors.As(err, &opErr):
		return lineErrorf(errOutage, "H9_DATABASE_URL: cannot reach PostgreSQL at %s (%v): start it, or fix the URL's host and port", where, opErr.Err)
	}
	return lineErrorf(errOutage, "H9_DATABASE_URL: %s: %s", where, oneLine(err))
}

// errOutage marks a start-up failure of something h9 depends on (exit 1).
var errOutage = errors.New("outage")

// notPostgresWords are pgx's words for a server whose bytes are not
// PostgreSQL's protocol (an HTTP or SSH server on the port, say): its
// first bytes read as an absurd message length or type.
var notPostgresWords = []string{"invalid body length", "unexpected message", "unknown message type"}

func notPostgres(err error) bool {
	msg := err.Error()
	return slices.ContainsFunc(notPostgresWords, func(w string) bool { return strings.Contains(msg, w) })
}

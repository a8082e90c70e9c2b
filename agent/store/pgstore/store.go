package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/h9-app/h9/agent/store"
)

// SQLSTATEs the store maps to its sentinels.
const (
	codeUniqueViolation = "23505"
	codeUndefinedTable  = "42P01"
	codeStepConflict    = "H9C01" // raised by h9_expect_length
	codeFenced          = "H9F01" // raised by h9_fence
)

// defaultMaxConns is the pool size unless the URL sets pool_max_conns:
// pgxpool's default (4 on a small machine) would queue a burst of
// sessions' commits behind one another.
const defaultMaxConns = 16

// Options tune a Store.
type Options struct {
	// Replica names this process among those sharing the database. It
	// holds the leases it acquires, and every write of a session is fenced
	// by the lease of the session's thread (lease.go). "" = one writer
	// alone (tests, tools): no leases, no fencing.
	Replica string
	// LeaseTTL is how long a lease lasts without renewal; 0 = store.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// ApplicationName is reported to the server (pg_stat_activity) unless
	// the URL sets application_name; "" = "h9".
	ApplicationName string
	// Logger receives what the store does in the background (renewals);
	// nil = discard.
	Logger *slog.Logger
	// OnLeaseChange, when set, is told every change of this replica's
	// leases, n at a time (one renewal extends many), for metrics;
	// synchronously: it must not block.
	OnLeaseChange func(c store.LeaseChange, n int)
}

// Store is the PostgreSQL backend. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	lostAt *suspicion // when a connection was last lost (retry.go)
	claims claimCounter
	holds  *holds // nil without a replica name
	listen *listener
	log    *slog.Logger
	stop   chan struct{} // closed by stopRenewing
	done   chan struct{} // closed when the renewer has stopped
	halt   sync.Once
	once   sync.Once
	quiet  context.CancelFunc // stops the listener
	heard  sync.WaitGroup     // the listener
}

// Open connects to the database at url (a postgres:// URL or a DSN),
// brings its schema to CurrentSchema and returns the Store. Close it.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, CheckURL(url)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set {
		cfg.ConnConfig.RuntimeParams["application_name"] = cmp.Or(opts.ApplicationName, "h9")
	}
	lostAt := &suspicion{}
	tune(cfg, lostAt)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: connecting: %w", store.ErrBackend, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, wrap("preparing the schema", err)
	}
	s := &Store{pool: pool, lostAt: lostAt, log: opts.Logger, stop: make(chan struct{}), done: make(chan struct{}), quiet: func() {}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.listen = &listener{cfg: cfg.ConnConfig.Copy(), log: s.log}
	s.listen.cfg.RuntimeParams["application_name"] += listenSuffix
	if opts.Replica == "" {
		close(s.done)
		return s, nil
	}
	s.holds = newHolds(opts.Replica, cmp.Or(opts.LeaseTTL, store.DefaultLeaseTTL))
	s.holds.changed = opts.OnLeaseChange
	go func() { defer close(s.done); s.renewLoop(s.stop) }()
	var lctx context.Context
	lctx, s.quiet = context.WithCancel(context.Background())
	s.heard.Go(func() { s.listen.run(lctx) })
	return s, nil
}

// releaseTimeout bounds Close's release of the leases still held.
const releaseTimeout = 5 * time.Second

// Close stops renewing, releases the leases still held (so that another
// replica takes their sessions at once rather than after their TTL) and
// closes the store's connections.
func (s *Store) Close() {
	s.once.Do(func() {
		s.quiet()
		s.heard.Wait()
		s.stopRenewing()
		if s.holds != nil {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			for _, l := range s.holds.all() {
				_ = s.ReleaseLease(ctx, l)
			}
			cancel()
		}
		closePool(s.pool)
	})
}

// closeTimeout bounds Close's wait for the pool to close. A connection
// whose call was cancelled closes by asking the server to cancel it
// first, and waits up to 15 s for a server that does not answer (pgx's
// asyncClose): a hung database must not hold h9's exit.
const closeTimeout = 3 * time.Second

func closePool(p *pgxpool.Pool) {
	closed := make(chan struct{})
	go func() { defer close(closed); p.Close() }()
	select {
	case <-closed:
	case <-time.After(closeTimeout):
	}
}

// wrap names the failed operation and maps the error to a store sentinel:
// the store's own, a refused step, a unique key taken, else ErrBackend.
func wrap(what string, err error) error {
	if isStoreError(err) {
		return fmt.Errorf("%s: %w", what, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeStepConflict:
			return fmt.Errorf("%w: %s: %s", store.ErrConflict, what, pgErr.Message)
		case codeFenced:
			return fmt.Errorf("%w: %s: %s", store.ErrFenced, what, pgErr.Message)
		case codeUniqueViolation:
			return fmt.Errorf("%w: %s: %s", store.ErrConflict, what, pgErr.Detail)
		}
	}
	return fmt.Errorf("%w: %s: %w", store.ErrBackend, what, err)
}

// wrapNil is wrap, keeping nil nil.
func wrapNil(what string, err error) error {
	if err == nil {
		return nil
	}
	return wrap(what, err)
}

// isCode reports whether err is the server's error code.
func isCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

func isStoreError(err error) bool {
	for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid, store.ErrCorrupt, store.ErrBackend, store.ErrFenced, store.ErrLeaseHeld} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}

// batch sends b as one round trip (an implicit transaction: an error in
// one statement undoes them all) and returns the first error; it is sent
// again when the connection was lost (retry), so b must be idempotent.
func (s *Store) batch(ctx context.Context, b *pgx.Batch) error {
	return s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		return q.SendBatch(ctx, b).Close()
	})
}

// validText refuses what a text column cannot hold: empty parts, NUL.
func validText(parts ...string) bool {
	for _, p := range parts {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return false
		}
	}
	return true
}

// CheckURL reports whether url is a connection string pgx accepts, without
// connecting. pgx's own words are left out: they may quote the URL, and
// with it a password.
func CheckURL(url string) error {
	if _, err := pgxpool.ParseConfig(url); err != nil {
		return fmt.Errorf("%w: the database URL does not parse as a postgres:// URL or a key=value string", store.ErrInvalid)
	}
	return nil
}

// Ping reports whether the database answers (h9's readiness check).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, "-- ping")
		return err
	}); err != nil {
		return wrap("pinging the database", err)
	}
	return nil
}

// stopRenewing ends the renewer and waits for it (Close; tests playing a
// paused replica).
func (s *Store) stopRenewing() {
	s.halt.Do(func() { close(s.stop) })
	<-s.done
}

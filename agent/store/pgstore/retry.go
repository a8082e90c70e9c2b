package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/h9-app/h9/workspace/netx"
)

// The database going away (ARCHITECTURE.md, "Lifetimes and deadlines"): a
// restart, a failover or a dropped socket closes the pool's connections
// under it. A call that failed because its connection was lost is run
// again on a fresh connection, with a growing pause, until it succeeds or
// its context ends; the caller's deadline says how long it waits for the
// database. A retry must not do twice what the first attempt did: every
// retried write is idempotent (an upsert, a fenced write carrying its
// token, a step carrying its history length) or recognises, when run
// again, that the first attempt committed (attempt.again).

// Bounds of the pause between attempts.
const (
	retryFirstPause = 50 * time.Millisecond
	retryMaxPause   = 2 * time.Second
)

// statementTimeout is the server-side bound of one statement: longer
// than any statement h9 sends takes on a loaded server (they are
// single-row writes and indexed reads), short enough that a statement
// stuck behind a lock does not hold a pooled connection for minutes.
const statementTimeout = 30 * time.Second

// connectTimeout bounds dialling and the start-up exchange of a new
// connection: a database that accepts TCP but does not answer (paused,
// partitioned) fails the connection instead of hanging it.
const connectTimeout = 10 * time.Second

// suspectFor is how long after a lost connection the pool pings every
// connection before handing it out: the others were opened to the same
// server and are likely gone too (pgxpool pings only those idle for over
// a second, and a sub-second restart leaves freshly used ones dead).
const suspectFor = 10 * time.Second

// acquireTimeout bounds one attempt's wait for a pooled connection: every
// one busy (or a new one not made) for this long means the database
// hangs, and the attempt is given up and made again on a fresh
// connection, while the caller's deadline lasts.
const acquireTimeout = 15 * time.Second

// errNoConn: no connection of the pool could be had within acquireTimeout.
var errNoConn = errors.New("no database connection")

// attempt is one run of a retried operation; again is set from the second.
type attempt struct{ again bool }

// pooled is a connection of the pool as an operation uses it.
type pooled interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// retry runs op on a pooled connection until it succeeds, fails for
// another reason than a lost connection, or ctx ends. ambiguous says
// whether op may be run again after a failure that leaves unknown whether
// it committed (a socket closed after the statement was sent): reads and
// idempotent writes may.
func (s *Store) retry(ctx context.Context, ambiguous bool, op func(context.Context, pooled, attempt) error) error {
	backoff := netx.Backoff{Base: retryFirstPause, Max: retryMaxPause}
	for n, a := 1, (attempt{}); ; n, a.again = n+1, true {
		err := s.onConn(ctx, a, op)
		if err == nil || ctx.Err() != nil {
			return err
		}
		notRun, lost := connectionLost(err)
		if !lost || !(notRun || ambiguous) {
			return err
		}
		s.suspect()
		pause := backoff.Step(n)
		s.log.Warn("the database connection was lost; trying again on a fresh one", "pause", pause, "err", err)
		if netx.Sleep(ctx, pause) != nil {
			return err
		}
	}
}

// connectionLost reports whether err means the connection, not the
// statement, failed (lost), and whether the statement then surely did not
// commit (notRun): nothing was sent, the server reported an error (a
// transaction that fails is undone), or no connection was made.
func connectionLost(err error) (notRun, lost bool) {
	if errors.Is(err, errNoConn) {
		return true, true
	}
	if pgconn.Timeout(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", strings.HasPrefix(pgErr.Code, "08"):
			return true, true
		}
		return false, false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) || pgconn.SafeToRetry(err) {
		return true, true
	}
	var netErr net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.As(err, &netErr),
		strings.Contains(err.Error(), "conn closed"):
		return false, true
	}
	return false, false
}

// onConn runs op on a connection of the pool, waiting at most
// acquireTimeout for one; a connection op found closed is not reused.
func (s *Store) onConn(ctx context.Context, a attempt, op func(context.Context, pooled, attempt) error) error {
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	c, err := s.pool.Acquire(actx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w within %s (every one of the pool is busy, or the database does not answer): %w", errNoConn, acquireTimeout, err)
		}
		return err
	}
	defer c.Release()
	return op(ctx, c, a)
}

// suspicion is when the store last lost a connection (unix nanoseconds),
// read by the pool's ShouldPing.
type suspicion struct{ at atomic.Int64 }

func (s *Store) suspect() { s.lostAt.at.Store(time.Now().UnixNano()) }

// shouldPing is the pool's ShouldPing: pgxpool's rule (idle over a
// second), and every connection for suspectFor after one was lost.
func (v *suspicion) shouldPing(_ context.Context, p pgxpool.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || time.Since(time.Unix(0, v.at.Load())) < suspectFor
}

// tune sets the connection bounds on cfg (Open).
func tune(cfg *pgxpool.Config, v *suspicion) {
	if _, set := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(statementTimeout.Milliseconds(), 10)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	cfg.ShouldPing = v.shouldPing
	cfg.PingTimeout = connectTimeout
}

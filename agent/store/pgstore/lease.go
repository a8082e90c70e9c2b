package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// acquireSQL takes a key's lease for a replica when nobody holds it, when
// its lease expired (by the database's clock), or when the replica itself
// holds it (a new hold, with a new token). Otherwise it returns the holder.
const acquireSQL = `WITH before AS (
	SELECT owner FROM h9_leases WHERE channel = $1 AND thread = $2),
taken AS (
	INSERT INTO h9_leases AS l (channel, thread, owner, token, expires)
	VALUES ($1, $2, $3, nextval('h9_lease_tokens'), now() + make_interval(secs => $4))
	ON CONFLICT (channel, thread) DO UPDATE
		SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires = EXCLUDED.expires
		WHERE l.expires <= now() OR l.owner = EXCLUDED.owner
	RETURNING owner, token, expires)
SELECT owner, token, expires, true, coalesce((SELECT owner FROM before), '') FROM taken
UNION ALL
SELECT owner, token, expires, false, '' FROM h9_leases
	WHERE channel = $1 AND thread = $2 AND NOT EXISTS (SELECT 1 FROM taken)`

// renewSQL extends, in one statement, every unexpired lease the replica
// still holds with the token it knows, and returns those it extended.
const renewSQL = `UPDATE h9_leases AS l SET expires = now() + make_interval(secs => $5)
	FROM unnest($1::text[], $2::text[], $3::bigint[]) AS h(channel, thread, token)
	WHERE l.channel = h.channel AND l.thread = h.thread AND l.token = h.token
		AND l.owner = $4 AND l.expires > now()
	RETURNING l.channel, l.thread, l.token`

// AcquireLease makes this replica the holder of key's lease, or fails
// with ErrLeaseHeld (the returned Lease then names the holder).
func (s *Store) AcquireLease(ctx context.Context, key store.LeaseKey) (store.Lease, error) {
	what := "acquiring the lease on " + key.String()
	if s.holds == nil {
		return store.Lease{}, fmt.Errorf("%w: %s: the store has no replica name", store.ErrInvalid, what)
	}
	if !validText(key.Channel, key.Thread) {
		return store.Lease{}, fmt.Errorf("%w: %s: malformed key", store.ErrInvalid, what)
	}
	for range 3 { // the holder may release between the two reads of acquireSQL
		sent := time.Now()
		l, mine, before, seen, err := s.acquireOnce(ctx, key)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return store.Lease{}, wrap(what, err)
		case !mine:
			return l, fmt.Errorf("%w: %s: %s holds it until %s", store.ErrLeaseHeld, what, l.Owner, l.Expires.Format(time.RFC3339Nano))
		}
		s.holds.add(l, sent)
		s.holds.saw(l, seen)
		if seen.rec != nil {
			s.bind(seen.rec.Meta)
		}
		if before != "" && before != l.Owner {
			s.changed(store.LeaseTakenOver, 1)
			s.log.Info("took over a lease another replica let lapse", "lease", key.String(), "from", before)
		} else {
			s.changed(store.LeaseAcquired, 1)
		}
		return l, nil
	}
	return store.Lease{}, fmt.Errorf("%w: %s: it changed hands three times in a row", store.ErrLeaseHeld, what)
}

// acquireOnce runs acquireSQL and, in the same round trip, the two reads
// a new holder makes next: whether the thread's inbox holds items and the
// thread's session record (what the holder knows, holds.saw). Both are
// read after the lease row is taken (a takeover waits for the previous
// holder's fenced write in flight), so they are as current as reads made
// later: the record changes only by this holder's fenced writes, and an
// item posted from now on is announced (NOTIFY) to the holder.
func (s *Store) acquireOnce(ctx context.Context, key store.LeaseKey) (l store.Lease, mine bool, before string, seen known, err error) {
	l.Key = key
	err = s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		seen = known{} // what a lost attempt read is read again
		return q.SendBatch(ctx, s.acquireBatch(key, &l, &mine, &before, &seen)).Close()
	})
	return l, mine, before, seen, err
}

// acquireBatch is acquireOnce's round trip, reading into its results.
func (s *Store) acquireBatch(key store.LeaseKey, l *store.Lease, mine *bool, before *string, seen *known) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(acquireSQL, key.Channel, key.Thread, s.holds.replica, s.holds.ttl.Seconds()).QueryRow(func(row pgx.Row) error {
		return row.Scan(&l.Owner, &l.Token, &l.Expires, mine, before)
	})
	b.Queue(inboxWaitingSQL, key.Channel, key.Thread).QueryRow(func(row pgx.Row) error {
		return row.Scan(&seen.inboxWaiting)
	})
	b.Queue("SELECT "+sessionColumns+" FROM h9_sessions WHERE channel = $1 AND thread = $2", key.Channel, key.Thread).
		Query(func(rows pgx.Rows) error {
			recs, err := pgx.CollectRows(rows, scanRecord)
			if len(recs) == 1 {
				seen.rec = &recs[0]
			}
			return err
		})
	return b
}

// ReleaseLease gives up a lease this replica holds, so that any replica
// may take the key at once. Releasing a lease already lost does nothing.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	if s.holds == nil || !s.holds.drop(l) {
		return nil
	}
	s.changed(store.LeaseReleased, 1)
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, "DELETE FROM h9_leases WHERE channel = $1 AND thread = $2 AND owner = $3 AND token = $4",
			l.Key.Channel, l.Key.Thread, l.Owner, l.Token)
		return err
	})
	if err != nil {
		return wrap("releasing the lease on "+l.Key.String(), err) // it expires by itself
	}
	return nil
}

// LeaseValid reports, without asking the database, whether l is still
// held: renewed within its TTL (less a margin) by this process's clock.
// A replica paused past its lease finds it invalid the moment it resumes.
func (s *Store) LeaseValid(l store.Lease) bool { return s.holds != nil && s.holds.valid(l) }

// OnLeaseLost registers f, called on the renewing goroutine with every
// lease this replica loses: its renewal came too late or failed, or
// another replica holds it now. f must not block.
func (s *Store) OnLeaseLost(f func(store.Lease)) {
	if s.holds == nil {
		return
	}
	s.holds.mu.Lock()
	s.holds.onLost = f
	s.holds.mu.Unlock()
}

// renewLoop renews the held leases every third of their TTL until stop,
// so that one late renewal does not lose them.
func (s *Store) renewLoop(stop <-chan struct{}) {
	t := time.NewTicker(s.holds.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.renew()
		}
	}
}

// renew first drops what lapsed by the local clock (a process paused past
// its leases must not extend them), then extends the rest in one statement.
func (s *Store) renew() {
	s.holds.lost(s.holds.expired(time.Now()))
	held := s.holds.all()
	if len(held) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.holds.ttl/3)
	defer cancel()
	sent := time.Now()
	ok, err := s.extend(ctx, held)
	if err != nil {
		s.log.Warn("renewing leases failed; they lapse unless a renewal succeeds in time", "leases", len(held), "err", err)
		return
	}
	s.changed(store.LeaseRenewed, len(ok))
	s.holds.lost(s.holds.renewed(held, ok, sent))
}

// extend runs renewSQL for held and returns the tokens it extended.
func (s *Store) extend(ctx context.Context, held []store.Lease) (map[store.LeaseKey]int64, error) {
	channels, threads, tokens := make([]string, len(held)), make([]string, len(held)), make([]int64, len(held))
	for i, l := range held {
		channels[i], threads[i], tokens[i] = l.Key.Channel, l.Key.Thread, l.Token
	}
	var ok map[store.LeaseKey]int64
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		ok = map[store.LeaseKey]int64{}
		rows, err := q.Query(ctx, renewSQL, channels, threads, tokens, s.holds.replica, s.holds.ttl.Seconds())
		if err != nil {
			return err
		}
		var key store.LeaseKey
		var token int64
		_, err = pgx.ForEachRow(rows, []any{&key.Channel, &key.Thread, &token}, func() error {
			ok[key] = token
			return nil
		})
		return err
	})
	return ok, err
}

// changed tells Options.OnLeaseChange about n changes, when it is set.
func (s *Store) changed(c store.LeaseChange, n int) {
	if s.holds.changed != nil {
		s.holds.changed(c, n)
	}
}

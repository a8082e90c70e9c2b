package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// inboxChannel is the LISTEN/NOTIFY channel of posted inbox items; the
// payload names the thread (notifyPayload).
const inboxChannel = "h9_inbox"

// maxOrphans bounds one scan for threads without a holder; the next scan
// gets the rest.
const maxOrphans = 200

type notifyPayload struct {
	Channel string `json:"c"`
	Thread  string `json:"t"`
}

// PostInbox appends an item to a thread's inbox and notifies every
// replica listening, in one transaction: the notification goes out when
// the item is there to take. Any replica may post, holder or not.
func (s *Store) PostInbox(ctx context.Context, key store.LeaseKey, item []byte) error {
	what := "posting to the inbox of " + key.String()
	if !validText(key.Channel, key.Thread) {
		return fmt.Errorf("%w: %s: malformed key", store.ErrInvalid, what)
	}
	payload, err := json.Marshal(notifyPayload{Channel: key.Channel, Thread: key.Thread})
	if err != nil {
		return fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	err = s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		insert := "INSERT INTO h9_inbox (channel, thread, item) VALUES ($1, $2, $3)"
		if a.again { // the lost attempt may have posted it: never twice
			insert = `INSERT INTO h9_inbox (channel, thread, item) SELECT $1, $2, $3 WHERE NOT EXISTS (
				SELECT 1 FROM h9_inbox WHERE channel = $1 AND thread = $2 AND item = $3)`
		}
		b := &pgx.Batch{}
		b.Queue(insert, key.Channel, key.Thread, item)
		b.Queue("SELECT pg_notify($1, $2)", inboxChannel, string(payload))
		return q.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return wrap(what, err)
	}
	return nil
}

// TakeInbox removes and returns a thread's items, oldest first. Only the
// lease's holder takes them (fenced like a session write).
func (s *Store) TakeInbox(ctx context.Context, key store.LeaseKey) ([][]byte, error) {
	what := "taking the inbox of " + key.String()
	type row struct {
		id   int64
		item []byte
	}
	var rows []row
	// A read first: most threads have nothing waiting, and a fenced delete
	// is a commit. A new hold's first take uses the read its acquisition made.
	waiting, read := s.holds.inboxChecked(key)
	if !read {
		err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
			return q.QueryRow(ctx, inboxWaitingSQL, key.Channel, key.Thread).Scan(&waiting)
		})
		if err != nil {
			return nil, wrap(what, err)
		}
	}
	if !waiting {
		return nil, nil
	}
	// Sent again after a lost connection, the delete takes what is left: a
	// lost attempt that committed took its items with it (a known limit: the
	// window is the acknowledgement of one commit).
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows = nil
		b := &pgx.Batch{}
		if err := s.fenceKey(b, key, what); err != nil {
			return err
		}
		b.Queue("DELETE FROM h9_inbox WHERE channel = $1 AND thread = $2 RETURNING id, item", key.Channel, key.Thread).
			Query(func(rs pgx.Rows) error {
				var r row
				_, err := pgx.ForEachRow(rs, []any{&r.id, &r.item}, func() error { rows = append(rows, r); return nil })
				return err
			})
		return q.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, wrap(what, err)
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(x.id, y.id) })
	items := make([][]byte, len(rows))
	for i, r := range rows {
		items[i] = r.item
	}
	return items, nil
}

// inboxWaitingSQL reports whether a thread's inbox holds items.
const inboxWaitingSQL = "SELECT EXISTS (SELECT 1 FROM h9_inbox WHERE channel = $1 AND thread = $2)"

// orphansSQL: active sessions and inbox items no unexpired lease covers.
const orphansSQL = `SELECT channel, thread FROM h9_sessions s WHERE active AND NOT EXISTS (
	SELECT 1 FROM h9_leases l WHERE l.channel = s.channel AND l.thread = s.thread AND l.expires > now())
UNION
SELECT channel, thread FROM h9_inbox i WHERE NOT EXISTS (
	SELECT 1 FROM h9_leases l WHERE l.channel = i.channel AND l.thread = i.thread AND l.expires > now())
LIMIT $1`

// Orphans lists the threads that need a holder: sessions a restart must
// act on whose lease lapsed or was released, and inbox items no live
// lease covers.
func (s *Store) Orphans(ctx context.Context) ([]store.LeaseKey, error) {
	var keys []store.LeaseKey
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, orphansSQL, maxOrphans)
		if err == nil {
			keys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.LeaseKey, error) {
				var k store.LeaseKey
				return k, r.Scan(&k.Channel, &k.Thread)
			})
		}
		return err
	})
	if err != nil {
		return nil, wrap("looking for orphaned sessions", err)
	}
	return keys, nil
}

// LeaseTTL is how long this store's leases last without renewal.
func (s *Store) LeaseTTL() time.Duration {
	if s.holds == nil {
		return store.DefaultLeaseTTL
	}
	return s.holds.ttl
}

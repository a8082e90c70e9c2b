package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

const sessionColumns = "id, team, channel, thread, owner, active, updated, data"

// PutSession stores a record; its metadata are columns, so every index
// follows it. A thread holds one session: a record for a thread that
// another session id already has is ErrConflict.
func (s *Store) PutSession(ctx context.Context, rec store.SessionRecord) error {
	m := rec.Meta
	what := "saving session " + m.ID
	if err := m.Check(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !json.Valid(rec.Data) {
		return fmt.Errorf("%w: %s: data is not JSON", store.ErrInvalid, what)
	}
	s.bind(m)
	f, err := s.fenceOf(store.LeaseKey{Channel: m.Channel, Thread: m.Thread}, what)
	if err != nil {
		return err
	}
	// An upsert under its fence: sent again after a lost connection, it
	// stores the same record, or is fenced when the lease moved meanwhile.
	err = s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, "SELECT h9_put_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
			f.owner, f.token, m.ID, m.Team, m.Channel, m.Thread, m.Owner, m.Active, m.Updated, []byte(rec.Data))
		return err
	})
	s.holds.wrote(store.LeaseKey{Channel: m.Channel, Thread: m.Thread}, rec, err)
	return wrapNil(what, err)
}

// FindThread returns the session of a thread, or ErrNotFound.
func (s *Store) FindThread(ctx context.Context, channel, thread string) (store.SessionRecord, error) {
	what := "finding the session of thread " + channel + "/" + thread
	if rec, found, ok := s.holds.record(store.LeaseKey{Channel: channel, Thread: thread}); ok {
		if !found {
			return store.SessionRecord{}, fmt.Errorf("%s: %w", what, store.ErrNotFound)
		}
		return rec, nil
	}
	var rec store.SessionRecord
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, "SELECT "+sessionColumns+" FROM h9_sessions WHERE channel = $1 AND thread = $2", channel, thread)
		if err == nil {
			rec, err = pgx.CollectExactlyOneRow(rows, scanRecord)
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.SessionRecord{}, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if err != nil {
		return store.SessionRecord{}, wrap(what, err)
	}
	s.bind(rec.Meta)
	return rec, nil
}

// ListChannel returns the sessions of a channel, oldest thread first.
func (s *Store) ListChannel(ctx context.Context, channel string) ([]store.SessionRecord, error) {
	return s.list(ctx, "listing channel "+channel,
		"SELECT "+sessionColumns+" FROM h9_sessions WHERE channel = $1 ORDER BY thread", channel)
}

// ListOwner returns the sessions owner started, most recently updated
// first (then the newest thread first), at most limit (0: all).
func (s *Store) ListOwner(ctx context.Context, owner string, limit int) ([]store.SessionRecord, error) {
	return s.list(ctx, "listing the sessions of "+owner,
		"SELECT "+sessionColumns+" FROM h9_sessions WHERE owner = $1 ORDER BY updated DESC, thread DESC LIMIT nullif($2, 0)",
		owner, limit)
}

// ListActive returns the metadata of every active session, in id order.
func (s *Store) ListActive(ctx context.Context) ([]store.SessionMeta, error) {
	recs, err := s.list(ctx, "listing active sessions",
		"SELECT "+sessionColumns+" FROM h9_sessions WHERE active ORDER BY id")
	if err != nil {
		return nil, err
	}
	out := make([]store.SessionMeta, len(recs))
	for i, r := range recs {
		out[i] = r.Meta
	}
	return out, nil
}

func (s *Store) list(ctx context.Context, what, sql string, args ...any) ([]store.SessionRecord, error) {
	var recs []store.SessionRecord
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, sql, args...)
		if err == nil {
			recs, err = pgx.CollectRows(rows, scanRecord)
		}
		return err
	})
	if err != nil {
		return nil, wrap(what, err)
	}
	return recs, nil
}

func scanRecord(row pgx.CollectableRow) (store.SessionRecord, error) {
	var r store.SessionRecord
	m := &r.Meta
	var data []byte
	err := row.Scan(&m.ID, &m.Team, &m.Channel, &m.Thread, &m.Owner, &m.Active, &m.Updated, &data)
	r.Data = data
	return r, err
}

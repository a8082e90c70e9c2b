package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// PutStart records a new session's command (by its ID, replacing one of
// the same ID). A retried insert that had committed finds its own row.
func (s *Store) PutStart(ctx context.Context, st store.Start) error {
	what := "recording the start " + st.ID
	if !validText(st.ID, st.Channel) || !json.Valid(st.Data) {
		return fmt.Errorf("%w: %s: an ID, a channel and JSON data are needed", store.ErrInvalid, what)
	}
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, `INSERT INTO h9_starts (id, channel, at, data) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET channel = EXCLUDED.channel, at = EXCLUDED.at, data = EXCLUDED.data`,
			st.ID, st.Channel, st.At, []byte(st.Data))
		return err
	})
	if err != nil {
		return wrap(what, err)
	}
	return nil
}

// Starts lists the recorded starts, oldest first.
func (s *Store) Starts(ctx context.Context) ([]store.Start, error) {
	var out []store.Start
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, "SELECT id, channel, at, data FROM h9_starts ORDER BY at, id")
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Start, error) {
			var st store.Start
			var data []byte
			err := row.Scan(&st.ID, &st.Channel, &st.At, &data)
			st.Data = data
			return st, err
		})
		return err
	})
	if err != nil {
		return nil, wrap("listing starts", err)
	}
	return out, nil
}

// DeleteStart forgets a start; one already gone is no error.
func (s *Store) DeleteStart(ctx context.Context, id string) error {
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, "DELETE FROM h9_starts WHERE id = $1", id)
		return err
	})
	if err != nil {
		return wrap("forgetting the start "+id, err)
	}
	return nil
}

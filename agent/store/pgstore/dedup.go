package pgstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// pruneEvery is how many fresh claims one Store makes between prunes.
// Each prune brings the table down to store.DedupLimit, so it holds at
// most DedupLimit + replicas × pruneEvery keys (about 10 % more with four
// replicas); a prune reads the DedupLimit newest keys of an index.
const pruneEvery = store.DedupLimit / 40

// claimCounter counts the fresh claims since the last prune.
type claimCounter struct {
	mu    sync.Mutex
	fresh int
}

// due adds n fresh claims and reports whether a prune is due (resetting).
func (c *claimCounter) due(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh += n
	if c.fresh < pruneEvery {
		return false
	}
	c.fresh = 0
	return true
}

// Claim records keys as seen at `at` and reports, for each, whether it was
// fresh: not claimed within store.DedupTTL before `at`. A key listed twice
// is fresh only the first time. Claims by two replicas race safely: the
// row lock makes the first claim win and the other see it as claimed.
func (s *Store) Claim(ctx context.Context, keys []string, at time.Time) ([]bool, error) {
	what := fmt.Sprintf("claiming %d dedup keys", len(keys))
	fresh := make([]bool, len(keys))
	unique := slices.Clone(keys)
	slices.Sort(unique) // one lock order for every claimer: no deadlock
	unique = slices.Compact(unique)
	if len(unique) == 0 {
		return fresh, nil
	}
	for _, k := range unique {
		if !validText(k) {
			return nil, fmt.Errorf("%w: %s: key %q", store.ErrInvalid, what, k)
		}
	}
	var claimed []string
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		sql := claimSQL
		if a.again {
			sql = claimAgainSQL
		}
		rows, err := q.Query(ctx, sql, unique, at, at.Add(-store.DedupTTL))
		if err == nil {
			claimed, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return nil, wrap(what, err)
	}
	won := make(map[string]bool, len(claimed))
	for _, k := range claimed {
		won[k] = true
	}
	for i, k := range keys {
		fresh[i] = won[k]
		delete(won, k) // a repeat in keys is not fresh
	}
	if s.claims.due(len(claimed)) {
		if err := s.prune(ctx, at); err != nil {
			return nil, err
		}
	}
	return fresh, nil
}

// claimSQL claims keys ($1) at $2 unless claimed after $3, returning
// those it claimed.
const claimSQL = `INSERT INTO h9_dedup AS d (key, claimed) SELECT k, $2 FROM unnest($1::text[]) AS k
	ON CONFLICT (key) DO UPDATE SET claimed = EXCLUDED.claimed WHERE d.claimed <= $3
	RETURNING key`

// claimAgainSQL is claimSQL sent again after a lost connection: a key
// claimed at exactly $2 is this claim's, committed by the lost attempt (a
// claim of another replica carries its own instant).
const claimAgainSQL = `WITH won AS (` + claimSQL + `)
	SELECT key FROM won UNION SELECT key FROM h9_dedup WHERE key = ANY($1) AND claimed = $2`

// prune forgets expired claims and all but the store.DedupLimit newest.
func (s *Store) prune(ctx context.Context, at time.Time) error {
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, `DELETE FROM h9_dedup WHERE claimed <= $1 OR key IN (
			SELECT key FROM h9_dedup ORDER BY claimed DESC, key DESC OFFSET $2)`, at.Add(-store.DedupTTL), store.DedupLimit)
		return err
	})
	if err != nil {
		return wrap("pruning dedup keys", err)
	}
	return nil
}

// Claimed returns the keys claimed at or after since, oldest claim first.
func (s *Store) Claimed(ctx context.Context, since time.Time) ([]string, error) {
	var keys []string
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, "SELECT key FROM h9_dedup WHERE claimed >= $1 ORDER BY claimed, key", since)
		if err == nil {
			keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		return err
	})
	if err != nil {
		return nil, wrap("listing dedup keys", err)
	}
	return keys, nil
}

package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
)

// Automations' records (ARCHITECTURE.md, "The fleet protocol"): every
// replica records the occurrences it sees, and the primary key makes one
// of them the winner; every other write is compare-and-swap on a version
// column. A write sent again after a lost connection recognises its own
// commit (the row as it wrote it), so it reports what it did, not a
// conflict with itself.

const occurrenceColumns = `automation, key, state, dedupe, channel, thread, cause, data, recorded, owner, claimed, version`

func scanOccurrence(row pgx.CollectableRow) (store.Occurrence, error) {
	var o store.Occurrence
	var state string
	var data []byte
	err := row.Scan(&o.Automation, &o.Key, &state, &o.Dedupe, &o.Channel, &o.Thread, &o.Cause, &data, &o.Recorded, &o.Owner, &o.Claimed, &o.Version)
	o.State = store.OccurrenceState(state)
	if data != nil {
		o.Data = data
	}
	return o, err
}

func occurrenceArgs(o store.Occurrence) []any {
	var data []byte
	if o.Data != nil {
		data = o.Data
	}
	return []any{o.Automation, o.Key, string(o.State), o.Dedupe, o.Channel, o.Thread, o.Cause, data, o.Recorded, o.Owner, o.Claimed}
}

// Shared reports that other processes (a fleet's replicas) may write
// the store: the automation engine takes what they contend for, such as
// overlap's slot, by compare-and-swap here.
func (s *Store) Shared() bool { return true }

// RecordOccurrence stores o unless its key is taken, and returns what is
// stored and whether this call stored it (Version 1).
func (s *Store) RecordOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, bool, error) {
	o = o.Normal()
	what := "recording occurrence " + o.Key + " of " + o.Automation
	if err := o.Check(); err != nil {
		return store.Occurrence{}, false, fmt.Errorf("%s: %w", what, err)
	}
	var got store.Occurrence
	var inserted bool
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		rows, err := q.Query(ctx, `WITH ins AS (
			INSERT INTO h9_automation_occurrences (`+occurrenceColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1)
			ON CONFLICT (automation, key) DO NOTHING
			RETURNING `+occurrenceColumns+`)
		SELECT `+occurrenceColumns+`, true FROM ins
		UNION ALL
		SELECT `+occurrenceColumns+`, false FROM h9_automation_occurrences
			WHERE automation = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM ins)`, occurrenceArgs(o)...)
		if err != nil {
			return err
		}
		got, err = pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (store.Occurrence, error) {
			var r store.Occurrence
			var state string
			var data []byte
			err := row.Scan(&r.Automation, &r.Key, &state, &r.Dedupe, &r.Channel, &r.Thread, &r.Cause, &data, &r.Recorded, &r.Owner, &r.Claimed, &r.Version, &inserted)
			r.State = store.OccurrenceState(state)
			if data != nil {
				r.Data = data
			}
			return r, err
		})
		if errors.Is(err, pgx.ErrNoRows) {
			// The key was taken by a transaction that committed after this
			// statement's snapshot: its insert waited for it and did
			// nothing, and its select could not see it. A new statement can.
			rows, err = q.Query(ctx, `SELECT `+occurrenceColumns+` FROM h9_automation_occurrences WHERE automation = $1 AND key = $2`, o.Automation, o.Key)
			if err != nil {
				return err
			}
			got, err = pgx.CollectExactlyOneRow(rows, scanOccurrence)
			inserted = false
		}
		if err == nil && !inserted && a.again {
			// The lost attempt's own insert: the row as this call wrote it.
			inserted = got.Version == 1 && got.Owner == o.Owner && got.Claimed.Equal(o.Claimed) && got.Recorded.Equal(o.Recorded)
		}
		return err
	})
	if err != nil {
		return store.Occurrence{}, false, wrap(what, err)
	}
	return got, inserted, nil
}

// Occurrence returns one occurrence, or ErrNotFound.
func (s *Store) Occurrence(ctx context.Context, automation, key string) (store.Occurrence, error) {
	var got store.Occurrence
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, `SELECT `+occurrenceColumns+` FROM h9_automation_occurrences WHERE automation = $1 AND key = $2`, automation, key)
		if err == nil {
			got, err = pgx.CollectExactlyOneRow(rows, scanOccurrence)
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Occurrence{}, fmt.Errorf("reading occurrence %s of %s: %w", key, automation, store.ErrNotFound)
	}
	if err != nil {
		return store.Occurrence{}, wrap("reading occurrence "+key+" of "+automation, err)
	}
	return got, nil
}

// UpdateOccurrence replaces the stored occurrence when its version is
// o.Version (else ErrConflict; ErrNotFound when there is none) and
// returns it as stored, with the next version.
func (s *Store) UpdateOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, error) {
	o = o.Normal()
	what := "updating occurrence " + o.Key + " of " + o.Automation
	if err := o.Check(); err != nil {
		return store.Occurrence{}, fmt.Errorf("%s: %w", what, err)
	}
	var stored store.Occurrence
	var updated bool
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		tag, err := q.Exec(ctx, `UPDATE h9_automation_occurrences SET state = $3, dedupe = $4, channel = $5, thread = $6,
			cause = $7, data = $8, recorded = $9, owner = $10, claimed = $11, version = version + 1
			WHERE automation = $1 AND key = $2 AND version = $12`, append(occurrenceArgs(o), o.Version)...)
		if err != nil {
			return err
		}
		if updated = tag.RowsAffected() == 1; updated {
			return nil
		}
		rows, err := q.Query(ctx, `SELECT `+occurrenceColumns+` FROM h9_automation_occurrences WHERE automation = $1 AND key = $2`, o.Automation, o.Key)
		if err == nil {
			stored, err = pgx.CollectExactlyOneRow(rows, scanOccurrence)
		}
		if err == nil && a.again {
			next := o
			next.Version = o.Version + 1
			updated = sameOccurrenceRow(stored, next)
		}
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Occurrence{}, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	case err != nil:
		return store.Occurrence{}, wrap(what, err)
	case !updated:
		return store.Occurrence{}, fmt.Errorf("%w: %s: version %d is stored, the write read %d", store.ErrConflict, what, stored.Version, o.Version)
	}
	o.Version++
	return o, nil
}

// sameOccurrenceRow reports whether the stored row is the one a write made.
func sameOccurrenceRow(a, b store.Occurrence) bool {
	return a.Version == b.Version && a.State == b.State && a.Dedupe == b.Dedupe && a.Channel == b.Channel &&
		a.Thread == b.Thread && a.Cause == b.Cause && string(a.Data) == string(b.Data) && a.Recorded.Equal(b.Recorded) &&
		a.Owner == b.Owner && a.Claimed.Equal(b.Claimed)
}

// claimOccurrencesSQL takes on, for $3 at $4, up to $5 occurrences in
// state $1 claimed before $2, oldest first; rows another claimer has
// locked are left to it (SKIP LOCKED), and a row it has just taken no
// longer matches once its claim commits.
const claimOccurrencesSQL = `UPDATE h9_automation_occurrences AS o SET owner = $3, claimed = $4, version = o.version + 1
	FROM (SELECT automation, key FROM h9_automation_occurrences
		WHERE state = $1 AND claimed < $2 ORDER BY claimed, automation, key LIMIT $5 FOR UPDATE SKIP LOCKED) AS c
	WHERE o.automation = c.automation AND o.key = c.key
	RETURNING o.automation, o.key, o.state, o.dedupe, o.channel, o.thread, o.cause, o.data, o.recorded, o.owner, o.claimed, o.version`

// ClaimOccurrences takes on for owner, at now, up to limit (0: all)
// occurrences in state claimed before `before`, oldest claim first. Sent
// again after a lost connection, it also returns those it had taken.
func (s *Store) ClaimOccurrences(ctx context.Context, state store.OccurrenceState, before time.Time, owner string, now time.Time, limit int) ([]store.Occurrence, error) {
	now = now.Truncate(time.Microsecond)
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	var out []store.Occurrence
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		sql := claimOccurrencesSQL
		if a.again {
			sql = `WITH won AS (` + claimOccurrencesSQL + `) SELECT * FROM won UNION
				SELECT ` + occurrenceColumns + ` FROM h9_automation_occurrences WHERE state = $1 AND owner = $3 AND claimed = $4`
		}
		rows, err := q.Query(ctx, sql, string(state), before, owner, now, lim)
		if err == nil {
			out, err = pgx.CollectRows(rows, scanOccurrence)
		}
		return err
	})
	if err != nil {
		return nil, wrap("claiming "+string(state)+" occurrences", err)
	}
	return out, nil
}

// Occurrences lists an automation's pending occurrences in state,
// oldest Recorded first, at most limit (0: all).
func (s *Store) Occurrences(ctx context.Context, automation string, state store.OccurrenceState, limit int) ([]store.Occurrence, error) {
	what := "listing " + string(state) + " occurrences of " + automation
	if !state.Pending() {
		return nil, fmt.Errorf("%w: %s: only pending ones are listed", store.ErrInvalid, what)
	}
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	var out []store.Occurrence
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, `SELECT `+occurrenceColumns+` FROM h9_automation_occurrences
			WHERE automation = $1 AND state = $2 ORDER BY recorded, key LIMIT $3`, automation, string(state), lim)
		if err == nil {
			out, err = pgx.CollectRows(rows, scanOccurrence)
		}
		return err
	})
	if err != nil {
		return nil, wrap(what, err)
	}
	return out, nil
}

// SettledOccurrences lists up to limit (0: all) occurrences recorded in
// [from, before) that are no longer pending, oldest Recorded first,
// without their Data: the candidates the engine's pruning looks at.
func (s *Store) SettledOccurrences(ctx context.Context, from, before time.Time, limit int) ([]store.Occurrence, error) {
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	var out []store.Occurrence
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, `SELECT automation, key, state, dedupe, channel, thread, cause, NULL::bytea, recorded, owner, claimed, version
			FROM h9_automation_occurrences WHERE recorded >= $1 AND recorded < $2 AND state NOT IN ('recorded', 'queued')
			ORDER BY recorded, automation, key LIMIT $3`, from, before, lim)
		if err == nil {
			out, err = pgx.CollectRows(rows, scanOccurrence)
		}
		return err
	})
	if err != nil {
		return nil, wrap("listing settled occurrences", err)
	}
	return out, nil
}

// ForgetOccurrences forgets each of olds that is still stored at its
// Version and is not pending (one another writer changed since it was
// read is kept), and returns how many it forgot. Sent again after a lost
// connection, it does not count what the lost attempt forgot.
func (s *Store) ForgetOccurrences(ctx context.Context, olds []store.Occurrence) (int, error) {
	if len(olds) == 0 {
		return 0, nil
	}
	automations, keys, versions := make([]string, len(olds)), make([]string, len(olds)), make([]int64, len(olds))
	for i, o := range olds {
		automations[i], keys[i], versions[i] = o.Automation, o.Key, o.Version
	}
	var n int64
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		tag, err := q.Exec(ctx, `DELETE FROM h9_automation_occurrences AS o
			USING unnest($1::text[], $2::text[], $3::bigint[]) AS f(automation, key, version)
			WHERE o.automation = f.automation AND o.key = f.key AND o.version = f.version
				AND o.state NOT IN ('recorded', 'queued')`, automations, keys, versions)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, wrap("forgetting occurrences", err)
	}
	return int(n), nil
}

// stateJSON is what h9_automation_states keeps in its data column: the
// fields that are not columns of their own.
type stateJSON struct {
	FirstLoaded time.Time       `json:"first_loaded"`
	Paused      bool            `json:"paused,omitempty"`
	PausedBy    string          `json:"paused_by,omitempty"`
	PausedAt    time.Time       `json:"paused_at"`
	Failures    int             `json:"failures,omitempty"`
	LastCause   string          `json:"last_cause,omitempty"`
	LastFired   time.Time       `json:"last_fired"`
	LastKey     string          `json:"last_key,omitempty"`
	LastChannel string          `json:"last_channel,omitempty"`
	LastThread  string          `json:"last_thread,omitempty"`
	Starts      int64           `json:"starts,omitempty"`
	Cursor      json.RawMessage `json:"cursor,omitempty"`
}

func encodeState(st store.AutomationState) ([]byte, error) {
	return json.Marshal(stateJSON{FirstLoaded: st.FirstLoaded, Paused: st.Paused, PausedBy: st.PausedBy, PausedAt: st.PausedAt,
		Failures: st.Failures, LastCause: st.LastCause, LastFired: st.LastFired, LastKey: st.LastKey,
		LastChannel: st.LastChannel, LastThread: st.LastThread, Starts: st.Starts, Cursor: st.Cursor})
}

func scanState(row pgx.CollectableRow) (store.AutomationState, error) {
	var st store.AutomationState
	var data []byte
	if err := row.Scan(&st.Name, &st.Version, &st.Day, &st.Spent, &data); err != nil {
		return st, err
	}
	var j stateJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return st, fmt.Errorf("%w: automation state %q: %w", store.ErrCorrupt, st.Name, err)
	}
	st.FirstLoaded, st.Paused, st.PausedBy, st.PausedAt = j.FirstLoaded, j.Paused, j.PausedBy, j.PausedAt
	st.Failures, st.LastCause, st.LastFired, st.LastKey = j.Failures, j.LastCause, j.LastFired, j.LastKey
	st.LastChannel, st.LastThread, st.Starts, st.Cursor = j.LastChannel, j.LastThread, j.Starts, j.Cursor
	return st, nil
}

// AutomationState returns an automation's state, or ErrNotFound.
func (s *Store) AutomationState(ctx context.Context, name string) (store.AutomationState, error) {
	what := "reading the state of automation " + name
	var st store.AutomationState
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, `SELECT name, version, day, spent, data FROM h9_automation_states WHERE name = $1`, name)
		if err == nil {
			st, err = pgx.CollectExactlyOneRow(rows, scanState)
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if err != nil {
		return st, wrap(what, err)
	}
	return st, nil
}

// AutomationStates lists every automation's state, by name.
func (s *Store) AutomationStates(ctx context.Context) ([]store.AutomationState, error) {
	var out []store.AutomationState
	err := s.retry(ctx, true, func(ctx context.Context, q pooled, _ attempt) error {
		rows, err := q.Query(ctx, `SELECT name, version, day, spent, data FROM h9_automation_states ORDER BY name`)
		if err == nil {
			out, err = pgx.CollectRows(rows, scanState)
		}
		return err
	})
	if err != nil {
		return nil, wrap("listing automation states", err)
	}
	return out, nil
}

// PutAutomationState writes st when the stored version is st.Version (0:
// none stored yet), else ErrConflict, and returns it as stored.
func (s *Store) PutAutomationState(ctx context.Context, st store.AutomationState) (store.AutomationState, error) {
	what := "saving the state of automation " + st.Name
	if err := st.Check(); err != nil || !validText(st.Name) {
		return store.AutomationState{}, fmt.Errorf("%s: %w", what, cmpErr(err))
	}
	st = st.Normal()
	data, err := encodeState(st)
	if err != nil {
		return store.AutomationState{}, fmt.Errorf("%w: %s: %w", store.ErrInvalid, what, err)
	}
	var written bool
	err = s.retry(ctx, true, func(ctx context.Context, q pooled, a attempt) error {
		sql := `UPDATE h9_automation_states SET version = version + 1, day = $3, spent = $4, data = $5 WHERE name = $1 AND version = $2`
		if st.Version == 0 {
			sql = `INSERT INTO h9_automation_states (name, version, day, spent, data) VALUES ($1, $2 + 1, $3, $4, $5) ON CONFLICT (name) DO NOTHING`
		}
		tag, err := q.Exec(ctx, sql, st.Name, st.Version, st.Day, st.Spent, data)
		if err != nil {
			return err
		}
		if written = tag.RowsAffected() == 1; written || !a.again {
			return nil
		}
		// The lost attempt's own write: the row as this call wrote it.
		var version, spent int64
		var day string
		var stored []byte
		err = q.QueryRow(ctx, `SELECT version, day, spent, data FROM h9_automation_states WHERE name = $1`, st.Name).Scan(&version, &day, &spent, &stored)
		written = err == nil && version == st.Version+1 && day == st.Day && spent == st.Spent && string(stored) == string(data)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return store.AutomationState{}, wrap(what, err)
	}
	if !written {
		return store.AutomationState{}, fmt.Errorf("%w: %s: the stored version is not %d", store.ErrConflict, what, st.Version)
	}
	st.Version++
	return st, nil
}

// cmpErr is err, or ErrInvalid when there is none (a name PostgreSQL's
// text cannot hold that Check let through).
func cmpErr(err error) error {
	if err != nil {
		return err
	}
	return store.ErrInvalid
}

// AddAutomationSpend adds tokens to the automation's spend of day (a new
// day starts from zero), creating its state if need be, and returns the
// day's spend. It is not sent again after a connection lost mid-way: an
// addition is not idempotent, and a spend counted twice would refuse a
// start; the caller is told instead.
func (s *Store) AddAutomationSpend(ctx context.Context, name, day string, tokens int64) (int64, error) {
	what := "adding to the spend of automation " + name
	if !validText(name, day) {
		return 0, fmt.Errorf("%w: %s: a name and a day are needed", store.ErrInvalid, what)
	}
	empty, _ := encodeState(store.AutomationState{})
	var spent int64
	err := s.retry(ctx, false, func(ctx context.Context, q pooled, _ attempt) error {
		return q.QueryRow(ctx, `INSERT INTO h9_automation_states AS a (name, version, day, spent, data) VALUES ($1, 1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET version = a.version + 1, day = EXCLUDED.day,
				spent = CASE WHEN a.day = EXCLUDED.day THEN a.spent + EXCLUDED.spent ELSE EXCLUDED.spent END
			RETURNING spent`, name, day, tokens, empty).Scan(&spent)
	})
	if err != nil {
		return 0, wrap(what, err)
	}
	return spent, nil
}

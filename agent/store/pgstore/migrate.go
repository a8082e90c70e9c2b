package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/h9-app/h9/agent/store"
)

// migrateLock is the advisory lock key replicas take while migrating, so
// that two starting together apply each migration once ("h9" in ASCII).
const migrateLock = 0x6839

// migrate brings the database to CurrentSchema in one transaction under
// the advisory lock. DDL is transactional in PostgreSQL: a failed
// migration leaves the schema as it was. A database already current is
// left alone; one from a newer h9 is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS h9_schema (
			version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`)
		if err != nil {
			return err
		}
		version, err := schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if version > CurrentSchema {
			return fmt.Errorf("%w: the database has schema %d, written by a newer h9 (this one knows %d)",
				store.ErrCorrupt, version, CurrentSchema)
		}
		for v := version; v < CurrentSchema; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating to schema %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO h9_schema (version) VALUES ($1)", v+1); err != nil {
				return err
			}
		}
		return nil
	})
}

// querier is what schemaVersion needs: a pool, a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func schemaVersion(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM h9_schema").Scan(&v)
	return v, err
}

// SchemaVersion reads a database's schema version without changing it
// (0: h9 never ran on it), for h9 doctor.
func SchemaVersion(ctx context.Context, url string) (int, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("%w: connecting: %w", store.ErrBackend, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	v, err := schemaVersion(ctx, conn)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeUndefinedTable {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: reading the schema version: %w", store.ErrBackend, err)
	}
	return v, nil
}

package main

import (
	"context"
	"strings"

	"github.com/h9-app/h9/agent/store/pgstore"
)

// checkDatabase connects to H9_DATABASE_URL and reads its schema version,
// changing nothing: migrations run when h9 starts.
func checkDatabase(ctx context.Context, cfg Config) finding {
	if cfg.DatabaseURL == "" {
		return ok("bbolt in %s/%s (set H9_DATABASE_URL to run replicas on PostgreSQL)", cfg.DataDir, dbFile)
	}
	v, err := pgstore.SchemaVersion(ctx, cfg.DatabaseURL)
	switch {
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

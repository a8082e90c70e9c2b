package main

import (
	"time"

	"github.com/h9-app/h9/agent/store/pgstore"
)

// minLeaseTTL keeps renewals (three per TTL) from turning into a busy loop.
const minLeaseTTL = time.Second

// checkDatabaseURL accepts an empty H9_DATABASE_URL (bbolt) or one pgx
// can parse. The value is never quoted back: it may carry a password.
func checkDatabaseURL(v string) error {
	if v == "" {
		return nil
	}
	if err := pgstore.CheckURL(v); err != nil {
		return invalid("H9_DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:5432/database) or key=value string")
	}
	return nil
}

func atLeast(name string, v, least time.Duration) error {
	if v < least {
		return invalid("%s must be at least %s (got %s)", name, least, v)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
)

// withPassword puts a password in a test database's URL (the test server
// trusts loopback, so any password connects): doctor must never print it.
func withPassword(dsn, pw string) string {
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

const doctorDBPassword = "s3cret-doctor-db-pw"

// doctor on PostgreSQL: an empty database, then one h9 migrated, then one
// a newer h9 migrated, each told apart; the data directory line no longer
// speaks of h9.db's lock; the password is never printed.
func TestDoctorDatabase(t *testing.T) {
	doctorEnv(t)
	dsn := withPassword(pgtest.New(t), doctorDBPassword)
	t.Setenv("H9_DATABASE_URL", dsn)
	lines := doctorDBLines(t, nil)
	wantMark(t, lines, "database", "✓", "the database is empty", "creates schema")
	wantMark(t, lines, "data directory", "✓", "state is in PostgreSQL")

	st, err := pgstore.Open(t.Context(), dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	wantMark(t, doctorDBLines(t, nil), "database", "✓", "this h9's")

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "INSERT INTO h9_schema (version) VALUES ($1)", pgstore.CurrentSchema+1); err != nil {
		t.Fatal(err)
	}
	wantMark(t, doctorDBLines(t, ErrDoctorFailed), "database", "✗", "newer than this h9's", "hint: upgrade")
}

func TestDoctorDatabaseUnreachable(t *testing.T) {
	doctorEnv(t)
	t.Setenv("H9_DATABASE_URL", "postgres://h9:"+doctorDBPassword+"@127.0.0.1:1/h9?connect_timeout=2")
	wantMark(t, doctorDBLines(t, ErrDoctorFailed), "database", "✗", "hint: check H9_DATABASE_URL")
}

// doctorDBLines runs doctor expecting want (nil: success) and checks the
// database's password is nowhere in its output.
func doctorDBLines(t *testing.T, want error) map[string]string {
	t.Helper()
	lines, err := doctorLines(t)
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("doctor: err = %v, want %v", err, want)
	}
	for _, l := range lines {
		if strings.Contains(l, doctorDBPassword) {
			t.Errorf("doctor printed the database password: %q", l)
		}
	}
	return lines
}

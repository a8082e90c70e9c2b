package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// shared is the test binary's server, started on first use by New.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Main runs a package's tests and then stops the shared server, if New
// started one. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	return code
}

// New returns the URL of a fresh, empty database on the test binary's
// shared server, dropped when the test ends. Without PostgreSQL installed
// the test is skipped — except under CI (CI set), where it fails: a CI run
// must never pass by skipping the database tests.
func New(t testing.TB) string {
	t.Helper()
	srv := SharedServer(t)
	srv.mu.Lock()
	srv.dbs++
	name := fmt.Sprintf("t%d_%d", os.Getpid(), srv.dbs)
	srv.mu.Unlock()
	ctx := context.Background()
	if err := srv.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = srv.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return srv.DSN(name)
}

// SharedServer returns the test binary's server, starting it on first use
// (see New for what happens without PostgreSQL).
func SharedServer(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = Start(context.Background(), Options{}) })
	switch {
	case errors.Is(shared.err, ErrNotInstalled) && os.Getenv("CI") == "":
		t.Skip(shared.err)
	case shared.err != nil:
		t.Fatal(shared.err)
	}
	return shared.srv
}

// exec runs one statement as the superuser on the maintenance database.
func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to the test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

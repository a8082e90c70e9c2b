package pgtest

import (
	"context"
	"errors"
	"fmt"
	"github.com/h9-app/h9/workspace/testenv"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// lazyServer is a server of the test binary, started on first use.
type lazyServer struct {
	once sync.Once
	srv  *Server
	err  error

	skipped atomic.Int32 // tests skipped for want of PostgreSQL
}

// shared is New's server; durable is NewDurable's.
var shared, durable lazyServer

// Main runs a package's tests and then stops the servers New and
// NewDurable started. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	for _, l := range []*lazyServer{&shared, &durable} {
		if l.srv != nil {
			l.srv.Stop()
		}
		if n := l.skipped.Load(); n > 0 {
			fmt.Printf("%v — %d tests skipped\n", l.err, n)
		}
	}
	return code
}

// New returns the URL of a fresh, empty database on the test binary's
// shared server, dropped when the test ends. Without PostgreSQL installed
// the test is skipped — except under CI (CI set), where it fails: a CI run
// must never pass by skipping the database tests.
func New(t testing.TB) string {
	t.Helper()
	return SharedServer(t).Database(t)
}

// NewDurable is New on a server of its own that keeps PostgreSQL's
// default fsync and synchronous_commit (Options.Durable), for benchmarks
// that compare commit costs with bbolt's.
func NewDurable(t testing.TB) string {
	t.Helper()
	return durable.get(t, Options{Durable: true}).Database(t)
}

// Database returns the URL of a fresh, empty database on s, dropped when
// the test ends.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.dbs++
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs)
	s.mu.Unlock()
	ctx := context.Background()
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = s.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return s.DSN(name)
}

// SharedServer returns the test binary's server, starting it on first use
// (see New for what happens without PostgreSQL).
func SharedServer(t testing.TB) *Server {
	t.Helper()
	return shared.get(t, Options{})
}

func (l *lazyServer) get(t testing.TB, opts Options) *Server {
	t.Helper()
	testenv.Need(t, "postgres") // the full run's: skipped under -short
	l.once.Do(func() { l.srv, l.err = Start(context.Background(), opts) })
	switch {
	case errors.Is(l.err, ErrNotInstalled) && os.Getenv("CI") == "":
		l.skipped.Add(1)
		t.Skip(l.err)
	case l.err != nil:
		t.Fatal(l.err)
	}
	return l.srv
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

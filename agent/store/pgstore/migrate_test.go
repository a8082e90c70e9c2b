package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgtest"
)

// Replicas starting together on a new database: every Open succeeds, each
// migration is applied once, and the schema is the current one.
func TestReplicasMigrateTogether(t *testing.T) {
	url := pgtest.New(t)
	const replicas = 6
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			s, err := Open(context.Background(), url, Options{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	rows := query[int](t, url, "SELECT version FROM h9_schema ORDER BY version")
	if len(rows) != CurrentSchema || rows[len(rows)-1] != CurrentSchema {
		t.Errorf("h9_schema holds %v, want each of 1…%d once", rows, CurrentSchema)
	}
	if v, err := SchemaVersion(context.Background(), url); err != nil || v != CurrentSchema {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, CurrentSchema)
	}
}

// Opening a current database again changes nothing and keeps the data.
func TestReopenKeepsData(t *testing.T) {
	url := pgtest.New(t)
	s := open(t, url, Options{})
	ctx := t.Context()
	if err := s.SetChannelSetting(ctx, "C1", "repo", "web"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, url, Options{})
	if v, err := s.ChannelSetting(ctx, "C1", "repo"); err != nil || v != "web" {
		t.Errorf("setting after a second Open = %q, %v", v, err)
	}
	if n := query[int](t, url, "SELECT count(*)::int FROM h9_schema"); n[0] != CurrentSchema {
		t.Errorf("%d migrations recorded after two opens, want %d", n[0], CurrentSchema)
	}
}

// A database migrated by a newer h9 is refused rather than misread; a
// database h9 never used reads as version 0 and is left untouched.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.New(t)
	if v, err := SchemaVersion(t.Context(), url); err != nil || v != 0 {
		t.Fatalf("SchemaVersion of an empty database = %d, %v; want 0", v, err)
	}
	if n := query[int](t, url, "SELECT count(*)::int FROM pg_tables WHERE tablename LIKE 'h9_%'"); n[0] != 0 {
		t.Fatalf("SchemaVersion created %d tables", n[0])
	}
	open(t, url, Options{}).Close()
	exec(t, url, "INSERT INTO h9_schema (version) VALUES ($1)", CurrentSchema+1)
	_, err := Open(t.Context(), url, Options{})
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Open of a newer schema: err = %v, want ErrCorrupt", err)
	}
}

// A database that cannot be reached is ErrBackend, and a malformed URL
// ErrInvalid, each naming what h9 was doing.
func TestUnreachableDatabase(t *testing.T) {
	srv := pgtest.SharedServer(t)
	_, err := Open(t.Context(), srv.DSN("no_such_database"), Options{})
	if !errors.Is(err, store.ErrBackend) {
		t.Errorf("Open of a missing database: %v, want ErrBackend", err)
	}
	if _, err := Open(t.Context(), "postgres://[::1", Options{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Open of a malformed URL: %v, want ErrInvalid", err)
	}
}

// What jsonb would refuse (a NUL in a tool's output) is stored byte for
// byte, and so is the agent's formatting.
func TestMessagesStoredByteForByte(t *testing.T) {
	s := open(t, pgtest.New(t), Options{})
	msg := json.RawMessage(`{"role":"tool",  "content":"a\u0000b"}`)
	if err := s.AppendStep(t.Context(), "s", store.Step{First: 0, Messages: []json.RawMessage{msg}}); err != nil {
		t.Fatal(err)
	}
	sess, err := s.LoadSession(t.Context(), "s")
	if err != nil || len(sess.Messages) != 1 || string(sess.Messages[0]) != string(msg) {
		t.Fatalf("read back %q, %v; want %q", sess.Messages, err, msg)
	}
}

func query[T any](t *testing.T, url, sql string, args ...any) []T {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exec(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

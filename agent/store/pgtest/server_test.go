package pgtest_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Two tests' databases are separate: a table made in one is not in the
// other, and each answers queries on the real server.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := connect(t, pgtest.New(t)), connect(t, pgtest.New(t))
	if _, err := a.Exec(ctx, "CREATE TABLE only_here (n int); INSERT INTO only_here VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "SELECT n FROM only_here").Scan(&n); err != nil || n != 42 {
		t.Fatalf("read back %d, %v; want 42", n, err)
	}
	var exists bool
	if err := b.QueryRow(ctx, "SELECT to_regclass('only_here') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("a table made in one test's database is visible in another's")
	}
}

// The server listens on loopback only and, when the tests run as root,
// its processes are not root (initdb and postgres refuse it, and a test
// server needs no privilege).
func TestServerIsUnprivilegedAndLocal(t *testing.T) {
	ctx := context.Background()
	c := connect(t, pgtest.New(t))
	var listen string
	if err := c.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if listen != "127.0.0.1" {
		t.Errorf("listen_addresses = %q, want 127.0.0.1", listen)
	}
	var pid int
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	uid := ""
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid = strings.Fields(rest)[0]
		}
	}
	if want := strconv.Itoa(os.Geteuid()); os.Geteuid() != 0 && uid != want {
		t.Errorf("backend runs as uid %s, want the test's own %s", uid, want)
	}
	if os.Geteuid() == 0 && (uid == "0" || uid == "") {
		t.Errorf("backend runs as uid %q under a root test run, want an unprivileged user", uid)
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// NewDurable's server syncs its commits; New's does not (its data is
// thrown away).
func TestDurableServerSyncs(t *testing.T) {
	for dsn, want := range map[string]string{pgtest.NewDurable(t): "on", pgtest.New(t): "off"} {
		var fsync, syncCommit string
		c := connect(t, dsn)
		if err := c.QueryRow(context.Background(), "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &syncCommit); err != nil {
			t.Fatal(err)
		}
		if fsync != want || syncCommit != want {
			t.Errorf("%s: fsync %s, synchronous_commit %s; want both %s", dsn, fsync, syncCommit, want)
		}
	}
}

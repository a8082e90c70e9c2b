package main

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
)

// fleetTTL is the replicas' H9_LEASE_TTL in these tests.
const fleetTTL = 2 * time.Second

// fleetBin runs several real h9 processes (replicas) on one PostgreSQL
// database, one shared data directory, one fake Slack (each replica
// through its own tagged API URL, so the fake tells their calls apart)
// and one fake model. Each replica connects to the database as
// application_name h9-<name>, which the audit trigger records.
type fleetBin struct {
	*binEnv
	dbURL string
	procs map[string]*replicaProc
}

type replicaProc struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
	logs   lockedBuffer
}

func newFleetBin(t testing.TB, extraEnv ...string) *fleetBin {
	t.Helper()
	testenv.Need(t, "postgres")
	return newFleetBinOn(t, pgtest.New(t), extraEnv...)
}

// newFleetBinOn is newFleetBin on the database at dbURL (a server of the
// test's own, which it may restart or pause).
func newFleetBinOn(t testing.TB, dbURL string, extraEnv ...string) *fleetBin {
	t.Helper()
	f := &fleetBin{dbURL: dbURL, procs: map[string]*replicaProc{}}
	f.binEnv = newBinEnv(t, append([]string{"H9_LEASE_TTL=" + fleetTTL.String()}, extraEnv...)...)
	st, err := pgstore.Open(f.ctx, f.dbURL, pgstore.Options{}) // migrated before the audit trigger goes on
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	f.sql(auditSQL)
	t.Cleanup(func() {
		for _, p := range f.procs {
			if p.cmd != nil {
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
			if t.Failed() {
				t.Logf("replica %s stderr:\n%s", p.name, p.logs.String())
			}
		}
	})
	return f
}

// start runs replica name (with env on top of the fleet's) and waits
// until its socket is connected.
func (f *fleetBin) start(name string, env ...string) *replicaProc {
	f.t.Helper()
	p := &replicaProc{name: name, exited: make(chan error, 1)}
	p.cmd = exec.Command(h9Binary(f.t))
	p.cmd.Env = append(slices.Clone(f.env), // later entries win
		"SLACK_API_URL="+f.slack.APIURLFor(name),
		"H9_DATABASE_URL="+f.dbURL+"&application_name=h9-"+name)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	if err := p.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	f.procs[name] = p
	f.waitFor("replica "+name+" connected", func() bool { return slices.Contains(f.slack.Replicas(), name) })
	return p
}

// signal sends sig to replica name (SIGKILL: and waits for it to die).
func (f *fleetBin) signal(name string, sig syscall.Signal) {
	f.t.Helper()
	p := f.procs[name]
	if err := p.cmd.Process.Signal(sig); err != nil {
		f.t.Fatal(err)
	}
	if sig == syscall.SIGKILL {
		<-p.exited
		p.cmd = nil
	}
}

// stopGracefully sends replica name SIGTERM and waits (up to a minute)
// for it to exit, so nothing it held can still be written afterwards.
func (f *fleetBin) stopGracefully(name string) {
	f.t.Helper()
	p := f.procs[name]
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		f.t.Fatal(err)
	}
	select {
	case <-p.exited:
		p.cmd = nil
	case <-time.After(time.Minute):
		f.t.Fatalf("replica %s did not exit within a minute of SIGTERM", name)
	}
}

// sql runs statements on the test database as the test, not a replica.
func (f *fleetBin) sql(stmt string, args ...any) {
	f.t.Helper()
	conn, err := pgx.Connect(f.ctx, f.dbURL)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(f.ctx, stmt, args...); err != nil {
		f.t.Fatal(err)
	}
}

// auditSQL records every committed write to the session tables with the
// writer's application_name and the database's time. A write a fence
// refused was rolled back, and so is its audit row.
const auditSQL = `
CREATE TABLE test_audit (app text, tbl text, op text, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION test_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO test_audit (app, tbl, op) VALUES (current_setting('application_name'), TG_TABLE_NAME, TG_OP);
	RETURN NULL;
END $$;
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON h9_sessions FOR EACH ROW EXECUTE FUNCTION test_audit();
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON h9_agent_sessions FOR EACH ROW EXECUTE FUNCTION test_audit();
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON h9_agent_messages FOR EACH ROW EXECUTE FUNCTION test_audit();
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON h9_leases FOR EACH ROW EXECUTE FUNCTION test_audit();
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON h9_inbox FOR EACH ROW EXECUTE FUNCTION test_audit();
`

// audit is the committed writes of replica name to table ("" = any) since t.
func (f *fleetBin) audit(name, table string, since time.Time) []string {
	f.t.Helper()
	conn, err := pgx.Connect(f.ctx, f.dbURL)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(f.ctx, `SELECT tbl || ' ' || op || ' at ' || at::text FROM test_audit
		WHERE app = $1 AND ($2 = '' OR tbl = $2) AND at > $3 ORDER BY at`, "h9-"+name, table, since)
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// firstWrite is when replica name first wrote table (zero when never).
func (f *fleetBin) firstWrite(name, table string) time.Time {
	f.t.Helper()
	conn, err := pgx.Connect(f.ctx, f.dbURL)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var at *time.Time
	if err := conn.QueryRow(f.ctx, "SELECT min(at) FROM test_audit WHERE app = $1 AND tbl = $2", "h9-"+name, table).Scan(&at); err != nil {
		f.t.Fatal(err)
	}
	if at == nil {
		return time.Time{}
	}
	return *at
}

// slackWritesBy lists the posting calls (chat.*, reactions.*) replica name
// made after t.
func (f *fleetBin) slackWritesBy(name string, since time.Time) []string {
	var out []string
	for _, c := range f.slack.Calls("") {
		if c.Replica == name && c.At.After(since) && (strings.HasPrefix(c.Method, "chat.") || strings.HasPrefix(c.Method, "reactions.")) {
			out = append(out, c.Method+" "+c.Params["text"])
		}
	}
	return out
}

// checkThread: one root, one checklist, and each marker at most once.
func (f *fleetBin) checkThread(thread string, markers ...string) {
	f.t.Helper()
	if n := len(f.msgs(thread, "h9_cl_title")); n != 1 {
		f.t.Errorf("thread %s has %d checklists, want 1", thread, n)
	}
	for _, m := range markers {
		if n := len(f.msgs(thread, m)); n != 1 {
			f.t.Errorf("thread %s has %d messages with %q, want 1", thread, n, m)
		}
	}
}

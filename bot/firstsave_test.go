package bot

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/fakemodel"
)

// A new session's first save refused because its lease lapsed
// (ARCHITECTURE.md, "Lifetimes and deadlines"), played on a real
// PostgreSQL: a trigger changes the thread's lease row the moment it is
// first taken, as a database paused past the TTL (or another replica)
// would have, while the replica still believes it holds it.

// leaseTamper runs do (PL/pgSQL on NEW) after the first lease row is
// inserted into h9_leases, in the acquiring statement; the sequence
// counts the rows it tampered with.
func leaseTamper(t *testing.T, url, do string) func() int64 {
	t.Helper()
	exec := func(f func(*pgx.Conn) error) {
		t.Helper()
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		if err := f(c); err != nil {
			t.Fatal(err)
		}
	}
	exec(func(c *pgx.Conn) error {
		_, err := c.Exec(context.Background(), `CREATE SEQUENCE h9test_tampered;
		CREATE FUNCTION h9test_tamper() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF (SELECT NOT is_called FROM h9test_tampered) THEN
				PERFORM nextval('h9test_tampered');
				`+do+`;
			END IF;
			RETURN NULL;
		END $$;
		CREATE TRIGGER h9test_tamper AFTER INSERT ON h9_leases
			FOR EACH ROW EXECUTE FUNCTION h9test_tamper()`)
		return err
	})
	return func() int64 {
		var n int64
		exec(func(c *pgx.Conn) error {
			return c.QueryRow(context.Background(), "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM h9test_tampered").Scan(&n)
		})
		return n
	}
}

// setLease is leaseTamper's rewrite of the row with set (a SET clause).
func setLease(set string) string {
	return "UPDATE h9_leases SET " + set + " WHERE channel = NEW.channel AND thread = NEW.thread"
}

// The lease expires in the database between the session's root message
// and its first save: the save is fenced, the replica takes the lease
// again (nobody else can hold a session that is not stored) and saves.
// The session is stored, runs and finishes, with one of each message.
func TestFirstSaveTakesALapsedLeaseAgain(t *testing.T) {
	f := newFleetEnv(t, "a")
	tampered := leaseTamper(t, f.url, setLease("expires = now() - interval '1 second'"))
	f.model.Enqueue(fakemodel.Text("Finished after the lapse."))
	thread := f.startSession("run", "outlive a lapsed lease")
	f.waitMessage(thread, "Finished after the lapse.", 1)
	f.waitChecklist(thread, "done")
	if n := tampered(); n != 1 {
		t.Fatalf("the trigger expired %d leases, want 1: the test did not play the lapse", n)
	}
	if s := f.fleetRecord(thread); s.State != stateDone {
		t.Errorf("the stored session is %q, want done", s.State.label())
	}
	if n := f.model.Calls(); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	f.checkOneOfEach(thread, "Finished after the lapse.")
}

// The database stalls past the lease's TTL while the lease is taken, as a
// paused database or replica would: the replica finds the lease lapsed
// before the session's first save even starts. It takes the lease again
// and the session is stored, runs and finishes, with one of each message.
func TestLeaseLapsedBeforeTheFirstSaveIsTakenAgain(t *testing.T) {
	f := newFleetEnv(t, "a")
	stalled := leaseTamper(t, f.url, "PERFORM pg_sleep("+strconv.Itoa(int(2*fleetTTL/time.Second))+")")
	f.model.Enqueue(fakemodel.Text("Finished after the stall."))
	thread := f.startSession("run", "outlive a stalled database")
	f.waitMessage(thread, "Finished after the stall.", 1)
	f.waitChecklist(thread, "done")
	if n := stalled(); n != 1 {
		t.Fatalf("the trigger stalled %d acquires, want 1: the test did not play the stall", n)
	}
	if s := f.fleetRecord(thread); s.State != stateDone {
		t.Errorf("the stored session is %q, want done", s.State.label())
	}
	f.checkOneOfEach(thread, "Finished after the stall.")
}

// When another holder has the lease by the first save, the replica gives
// the session up: it does not take the lease from that holder, stores
// nothing and asks the model nothing.
func TestFirstSaveGivesUpToAnotherHolder(t *testing.T) {
	f := newFleetEnv(t, "a")
	tampered := leaseTamper(t, f.url, setLease("owner = 'elsewhere', expires = now() + interval '1 hour'"))
	thread := f.startSession("run", "a lease held elsewhere")
	f.waitFor("the lease taken elsewhere", func() bool { return tampered() == 1 })
	f.waitFor("the session given up", func() bool { return f.replicas["a"].bot.reg.find(threadKey{channel: testChannel, ts: thread}) == nil })
	if _, err := f.replicas["a"].store.FindThread(f.ctx, testChannel, thread); err == nil {
		t.Error("the session was stored under another holder's lease")
	}
	if n := f.model.Calls(); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

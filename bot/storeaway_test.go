package bot

import (
	"context"
	"testing"

	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/bot/render"
)

// The database going away (ARCHITECTURE.md, "Lifetimes and deadlines"),
// played on a real PostgreSQL: a trigger makes the server refuse some
// writes, as a database failing them would, until the test allows them.

// dbRefusal is a trigger refusing writes to table that match when (SQL on
// NEW); the sequence counts the refused writes (nextval is not undone with
// the transaction it ran in).
type dbRefusal struct {
	t     *testing.T
	url   string
	table string
}

func refuse(t *testing.T, url, table, when string) *dbRefusal {
	t.Helper()
	r := &dbRefusal{t: t, url: url, table: table}
	r.exec(`CREATE SEQUENCE IF NOT EXISTS h9test_refused;
		CREATE OR REPLACE FUNCTION h9test_refuse_` + table + `() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF ` + when + ` THEN
				PERFORM nextval('h9test_refused');
				RAISE EXCEPTION 'the test refuses this write';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER h9test_refuse BEFORE INSERT OR UPDATE ON ` + table + `
			FOR EACH ROW EXECUTE FUNCTION h9test_refuse_` + table + `()`)
	return r
}

// refused counts the writes refused so far.
func (r *dbRefusal) refused() int64 {
	var n int64
	r.query(func(c *pgx.Conn) error {
		return c.QueryRow(context.Background(), "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM h9test_refused").Scan(&n)
	})
	return n
}

// allow drops the trigger.
func (r *dbRefusal) allow() { r.exec("DROP TRIGGER h9test_refuse ON " + r.table) }

func (r *dbRefusal) exec(sql string) {
	r.query(func(c *pgx.Conn) error { _, err := c.Exec(context.Background(), sql); return err })
}

func (r *dbRefusal) query(f func(*pgx.Conn) error) {
	r.t.Helper()
	c, err := pgx.Connect(context.Background(), r.url)
	if err != nil {
		r.t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := f(c); err != nil {
		r.t.Fatal(err)
	}
}

// fleetRecord reads thread's record from the fleet's database.
func (f *fleetEnv) fleetRecord(thread string) *Session {
	f.t.Helper()
	st, err := pgstore.Open(f.ctx, f.url, pgstore.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	defer st.Close()
	r, err := st.FindThread(f.ctx, testChannel, thread)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := decodeSession(r)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// A run's failure is posted only once the save recording the post has
// committed: while the database refuses that save nothing is posted, and
// once it takes it the failure is posted, once.
func TestNothingPostedBeforeItsSaveCommitted(t *testing.T) {
	f := newFleetEnv(t, "a")
	saves := refuse(t, f.url, "h9_sessions", `convert_from(NEW.data, 'UTF8') LIKE '%"key":"notice-%'`)
	f.model.Enqueue(fakemodel.ServerError(), fakemodel.ServerError(), fakemodel.ServerError())
	thread := f.startSession("plan", "a failing model")
	f.waitFor("the save of the failure refused twice, or the failure posted", func() bool {
		return saves.refused() >= 2 || len(f.botMessages(thread, render.ActionRetry)) > 0
	})
	if n := len(f.botMessages(thread, render.ActionRetry)); n != 0 {
		t.Fatalf("the failure was posted %d times while the save recording it failed", n)
	}
	saves.allow()
	f.waitMessage(thread, render.ActionRetry, 1)
	f.waitFor("the post recorded", func() bool { return len(f.fleetRecord(thread).Posts) == 0 })
	if n := len(f.botMessages(thread, render.ActionRetry)); n != 1 {
		t.Errorf("the failure was posted %d times, want once", n)
	}
}

// A click, and a reply, while the database cannot take the session's
// lease are answered at once with "h9 cannot save right now…", never acked
// and dropped; once the database answers, the same click works.
func TestClickDuringAnOutageIsAnswered(t *testing.T) {
	f := newFleetEnv(t, "a")
	thread, review := f.planned("review during an outage", "a:pending")
	f.waitFor("the session at rest, its lease released", func() bool { return f.replicas["a"].bot.reg.find(threadKey{channel: testChannel, ts: thread}) == nil })
	leases := refuse(t, f.url, "h9_leases", "true")
	f.click(testUser, review.TS, render.ActionApproveAuto)
	f.waitEphemeral(testChannel, testUser, "h9 cannot save right now, try again in a moment")
	if leases.refused() == 0 {
		t.Fatal("the click never asked for the lease")
	}
	f.reply(testUser, thread, "a reply during the outage")
	f.waitFor("the reply answered too", func() bool {
		n := 0
		for _, m := range f.slack.Ephemerals(testChannel, testUser) {
			if strings.Contains(m.Text, "h9 cannot save right now") {
				n++
			}
		}
		return n == 2
	})
	leases.allow()
	f.model.Enqueue(worked("a:completed"), fakemodel.Text("Done after the outage."))
	f.click(testUser, review.TS, render.ActionApproveAuto)
	f.waitMessage(thread, "Done after the outage.", 1)
}

// A replica that stops after a session is done but before the checklist's
// last edit has landed (here Slack holds every edit, and the stop cuts the
// edit short) leaves the edit due in the record: the other replica adopts
// the session and makes it, so the checklist says done, without Stop.
func TestTheLastEditOfADeadHolderIsMadeByTheNext(t *testing.T) {
	f := newFleetEnv(t, "a", "b")
	f.slack.Prefer("a")
	release := f.slack.Hang("chat.update")
	defer release()
	// The run's words post as a message, not as the edit of a stream
	// that Slack holds like every edit here (stream.go).
	f.slack.Refuse("chat.startStream", "not_authorized")
	f.model.Enqueue(worked("a:completed"), fakemodel.Text("All done here."))
	thread := f.startSession("run", "finish before the edit")
	f.waitMessage(thread, "All done here.", 1)
	if !f.fleetRecord(thread).EditDue {
		t.Fatal("the record of a done session whose checklist edit is held does not say the edit is due")
	}
	a := f.replicas["a"]
	a.bot.grace = 0 // cut the held edit short at once
	a.stop()
	release()
	f.waitChecklist(thread, "done")
	f.waitFor("the checklist without its Stop button", func() bool {
		return !strings.Contains(string(f.checklist(thread).Blocks), render.ActionStop)
	})
	f.waitFor("the edit recorded as made", func() bool { return !f.fleetRecord(thread).EditDue })
	if n := f.callsBy("b", "chat.update", ""); n == 0 {
		t.Error("replica b did not make the edit")
	}
}

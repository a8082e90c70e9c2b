package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/h9-app/h9/agent/store/pgtest"
)

// The chaos test: three replicas of the binary on a PostgreSQL server of
// the test's own, sessions arriving while replicas are killed (-9) and
// paused past their leases, the database restarted and its postmaster
// killed, the Socket Mode connections dropped, Slack answering 429 and
// sending envelopes to two replicas at once. Then every session is done
// (none failed), each thread has one checklist and one final answer, and
// every committed write of a session was made under its writer's lease.
//
// The short form (CI) plays each fault once. H9_CHAOS_LONG=<duration>
// (e.g. 4m) plays random faults every 8–14 s for that long, with a new
// session every 2 s; H9_CHAOS_SEED fixes its choices.
func TestFleetBinaryChaos(t *testing.T) {
	testenv.Need(t, "postgres")
	srv := pgtest.Own(t)
	c := &chaos{srv: srv, t: t}
	// The TTL outlasts the database's crash recovery (a few seconds), as
	// the default 15 s does: a longer outage lapses every lease (see
	// RELIABILITY.md's limits for a session created just before one).
	c.fleetBin = newFleetBinOn(t, srv.Database(t), "H9_LEASE_TTL="+chaosTTL.String())
	c.sql(leaseAuditSQL)
	c.model.SetHandler(perTaskScript)
	for range 3 {
		c.startReplica()
	}
	long, _ := time.ParseDuration(os.Getenv("H9_CHAOS_LONG"))
	if long > 0 { // the environment's waits end with its context
		ctx, cancel := context.WithTimeout(context.Background(), long+3*time.Minute)
		defer cancel()
		c.binEnv.ctx = ctx
	}
	started := time.Now()
	if long > 0 {
		c.playLong(long)
	} else {
		c.playShort()
	}
	c.slack.Fanout(1)
	if err := c.slack.WaitFor(c.ctx, "every session done", c.allDone); err != nil {
		c.dumpUnfinished()
		if dump := os.Getenv("H9_TEST_DUMP"); dump != "" {
			for name, p := range c.procs {
				_ = os.WriteFile(dump+"."+name, []byte(p.logs.String()), 0o644)
			}
		}
		t.Fatal(err)
	}
	for _, th := range c.threads {
		c.waitChecklist(th, "2/2 tasks", "done")
		c.waitMsg(th, "Finished ", 1) // the checklist's last edit comes before the outcome
		c.checkThread(th, "Finished ")
		if n := len(c.msgs(th, "h9_retry")); n != 0 {
			t.Errorf("thread %s: %d failures posted", th, n)
		}
	}
	c.checkLeasedWrites()
	t.Logf("chaos: %d sessions, %d replicas started, faults %v, %d Slack writes, %d committed session writes, %v",
		len(c.threads), c.incarnations, c.faults, c.slackWrites(), c.committedWrites(), time.Since(started).Round(time.Second))
}

// chaosTTL is the replicas' H9_LEASE_TTL in the chaos test.
const chaosTTL = 5 * time.Second

// chaos is the fleet under test and what was done to it.
type chaos struct {
	*fleetBin
	t            *testing.T
	srv          *pgtest.Server
	threads      []string
	live         []string // replicas running
	incarnations int
	faults       map[string]int
}

// startReplica starts a new replica process, named after its incarnation
// (a replica started again is a new process with a new lease owner).
func (c *chaos) startReplica() {
	c.incarnations++
	name := "r" + strconv.Itoa(c.incarnations)
	c.start(name)
	c.live = append(c.live, name)
}

// sessions starts n sessions at once and, when stored is set, waits for
// their records: a fault landing between a session's root message and its
// first commit loses it (RELIABILITY.md, limits, found by this test's long
// form), so both forms start their faults once sessions are stored.
func (c *chaos) sessions(n int, stored bool) {
	threads := c.burst(n, "chaos"+strconv.Itoa(len(c.threads)))
	c.threads = append(c.threads, threads...)
	for _, th := range threads {
		if stored {
			c.waitFor("the record of "+th, func() bool {
				return len(c.query("SELECT id, '' FROM h9_sessions WHERE thread = '"+th+"'")) == 1
			})
		}
	}
}

// playShort plays each fault once, each with sessions in flight.
func (c *chaos) playShort() {
	c.sessions(3, true)
	for _, f := range chaosFaults {
		c.sessions(1, true)
		c.do(f)
	}
}

// playLong plays random faults for d, a new session every 2 s.
func (c *chaos) playLong(d time.Duration) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("H9_CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	c.t.Logf("chaos seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	end := time.Now().Add(d)
	next := time.Now()
	for time.Now().Before(end) {
		c.sessions(1, true)
		if time.Now().After(next) {
			c.do(chaosFaults[rng.IntN(len(chaosFaults))])
			next = time.Now().Add(8*time.Second + time.Duration(rng.IntN(6000))*time.Millisecond)
		}
		time.Sleep(2 * time.Second) // the pace of arriving sessions
	}
}

// fault is one thing done to the fleet.
type fault struct {
	name string
	do   func(*chaos)
}

var chaosFaults = []fault{
	{"kill -9 a replica", (*chaos).killReplica},
	{"pause a replica past 2 TTLs", (*chaos).pauseReplica},
	{"restart the database", func(c *chaos) { c.must(c.srv.Restart(c.ctx)) }},
	{"kill the postmaster", func(c *chaos) { c.must(c.srv.Crash(c.ctx)) }},
	{"drop the sockets", func(c *chaos) { c.slack.DropConnection() }},
	{"429s", func(c *chaos) {
		c.slack.RateLimit("chat.update", 3, time.Second)
		c.slack.RateLimit("chat.postMessage", 2, 500*time.Millisecond)
	}},
	{"envelopes to two replicas", func(c *chaos) { c.slack.Fanout(2); c.sessions(1, false); c.slack.Fanout(1) }},
}

func (c *chaos) do(f fault) {
	if c.faults == nil {
		c.faults = map[string]int{}
	}
	c.faults[f.name]++
	c.t.Logf("%s: %s", time.Now().Format("15:04:05.000"), f.name)
	f.do(c)
}

func (c *chaos) must(err error) {
	if err != nil {
		c.t.Fatal(err)
	}
}

// killReplica kills a replica mid-run (the first live one when none is)
// and starts a new one.
func (c *chaos) killReplica() {
	victim := c.live[0]
	c.waitFor("a session mid-run", func() bool {
		if r := c.midRun(c.threads); r != "" && c.procs[r].cmd != nil {
			victim = r
			return true
		}
		return c.allDone()
	})
	c.signal(victim, syscall.SIGKILL)
	c.live = without(c.live, victim)
	c.startReplica()
}

// pauseReplica stops a replica (SIGSTOP) for 2.5 lease TTLs: the others
// take its sessions over; resumed, it finds its leases lost.
func (c *chaos) pauseReplica() {
	victim := c.live[len(c.live)-1]
	c.signal(victim, syscall.SIGSTOP)
	time.Sleep(5 * chaosTTL / 2) // the scenario: a pause past the lease
	c.signal(victim, syscall.SIGCONT)
}

// allDone reports whether every session's checklist says done.
func (c *chaos) allDone() bool {
	for _, th := range c.threads {
		if !c.done(th) {
			return false
		}
	}
	return true
}

func (c *chaos) done(thread string) bool {
	ms := c.msgs(thread, "h9_cl_title")
	return len(ms) == 1 && strings.Contains(ms[0].Text, "2/2 tasks") && strings.Contains(ms[0].Text, "done")
}

// dumpUnfinished logs what the threads not done show.
func (c *chaos) dumpUnfinished() {
	for _, th := range c.threads {
		if c.done(th) {
			continue
		}
		for _, m := range c.slack.Thread("C1", th) {
			c.t.Logf("thread %s: ts=%s bot=%t text=%q", th, m.TS, m.BotID != "", m.Text)
		}
		for _, r := range c.query("SELECT convert_from(data, 'UTF8'), active::text FROM h9_sessions WHERE thread = '" + th + "'") {
			c.t.Logf("thread %s: record active=%s %s", th, r[1], r[0])
		}
	}
}

func without(names []string, name string) []string {
	var out []string
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}

// leaseAuditSQL records, for every committed write of a session's record
// or messages, the writer and who held the thread's unexpired lease then
// (NULL: nobody). A write a fence refused was rolled back with its row.
const leaseAuditSQL = `
CREATE TABLE chaos_writes (app text, holder text);
CREATE FUNCTION chaos_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO chaos_writes SELECT current_setting('application_name'), (SELECT owner FROM h9_leases
		WHERE channel = NEW.channel AND thread = NEW.thread AND expires > now());
	RETURN NULL;
END $$;
CREATE FUNCTION chaos_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO chaos_writes SELECT current_setting('application_name'), (SELECT l.owner FROM h9_sessions s
		JOIN h9_leases l ON l.channel = s.channel AND l.thread = s.thread AND l.expires > now() WHERE s.id = NEW.session_id);
	RETURN NULL;
END $$;
CREATE TRIGGER chaos AFTER INSERT OR UPDATE ON h9_sessions FOR EACH ROW EXECUTE FUNCTION chaos_record();
CREATE TRIGGER chaos AFTER INSERT ON h9_agent_messages FOR EACH ROW EXECUTE FUNCTION chaos_message();
`

// checkLeasedWrites fails unless every audited write was made under a
// lease, each replica process under its own name alone.
func (c *chaos) checkLeasedWrites() {
	c.t.Helper()
	rows := c.query(`SELECT app, coalesce(holder, '') FROM chaos_writes`)
	owners := map[string]map[string]bool{} // app → lease owners seen
	unleased := map[string]int{}
	for _, r := range rows {
		app, holder := r[0], r[1]
		if holder == "" {
			unleased[app]++
			continue
		}
		if owners[app] == nil {
			owners[app] = map[string]bool{}
		}
		owners[app][holder] = true
	}
	for app, n := range unleased {
		c.t.Errorf("%s committed %d writes while nobody held the thread's lease", app, n)
	}
	seen := map[string]string{}
	for app, os := range owners {
		if len(os) != 1 {
			c.t.Errorf("%s committed writes under the leases of %d owners: %v", app, len(os), os)
		}
		for o := range os {
			if other, dup := seen[o]; dup {
				c.t.Errorf("%s and %s both wrote under the lease owner %s", app, other, o)
			}
			seen[o] = app
		}
	}
	if len(rows) == 0 {
		c.t.Error("no write was audited")
	}
}

func (c *chaos) committedWrites() int { return len(c.query("SELECT app, '' FROM chaos_writes")) }

// slackWrites counts the posting Web API calls of every replica.
func (c *chaos) slackWrites() int {
	n := 0
	for _, call := range c.slack.Calls("") {
		if strings.HasPrefix(call.Method, "chat.") || strings.HasPrefix(call.Method, "reactions.") {
			n++
		}
	}
	return n
}

// query runs a two-column query as the test.
func (c *chaos) query(sql string) [][2]string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // also after the fleet's waits ended
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dbURL)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var v [2]string
		return v, r.Scan(&v[0], &v[1])
	})
	if err != nil {
		c.t.Fatal(fmt.Errorf("%s: %w", sql, err))
	}
	return out
}

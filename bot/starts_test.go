package bot

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace/testenv"
)

// leaveStart writes what a process killed after /h9 run recorded its
// start leaves in the data directory: the start, and (posted) the root
// message it had posted, as the bot, before the session's first commit.
func (e *env) leaveStart(task string, posted bool) (store.Start, string) {
	e.t.Helper()
	d := startData{Team: "T1", Owner: testUser, Task: task, Mode: planning.PlanModeDefault}
	data, _ := json.Marshal(d)
	st := store.Start{ID: "0123abcd" + strings.Repeat("0", 8), Channel: testChannel, At: time.Now().Add(-time.Second), Data: data}
	if err := openStore(e.t, e.db).PutStart(e.ctx, st); err != nil {
		e.t.Fatal(err)
	}
	if !posted {
		return st, ""
	}
	root := render.WithStart(rootMessage(d), st.ID)
	api := slack.New(e.slack.Options().BotToken, slack.OptionAPIURL(e.slack.APIURL()))
	_, ts, err := api.PostMessageContext(e.ctx, testChannel, slack.MsgOptionText(root.Text, false), slack.MsgOptionBlocks(root.Blocks...))
	if err != nil {
		e.t.Fatal(err)
	}
	return st, ts
}

func (e *env) starts() []store.Start {
	e.t.Helper()
	got, err := e.store.Starts(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// h9 killed after posting a session's root message and before its first
// commit: the next start finds the thread by the start's ID and the
// session runs there, once; the start is forgotten.
func TestStartLeftAfterItsRootMessageIsFinished(t *testing.T) {
	e := prepareEnv(t, t.TempDir())
	_, thread := e.leaveStart("tidy the logs", true)
	e.model.Enqueue(fakemodel.Text("Tidied."))
	e.start()
	e.waitMessage(thread, "Done:", 1)
	if n := len(e.rootMessages()); n != 1 {
		t.Errorf("%d root messages, want the one the stopped process posted", n)
	}
	if rec, err := e.store.FindThread(e.ctx, testChannel, thread); err != nil || !strings.Contains(string(rec.Data), "tidy the logs") {
		t.Errorf("the session's record: %s, %v", rec.Data, err)
	}
	e.waitFor("the start forgotten", func() bool { return len(e.starts()) == 0 })
}

// h9 killed after recording a start and before posting: the next start
// posts the root message (carrying the start) and runs the session there.
func TestStartLeftBeforeItsRootMessageIsPosted(t *testing.T) {
	e := prepareEnv(t, t.TempDir())
	st, _ := e.leaveStart("tidy the logs", false)
	e.model.Enqueue(fakemodel.Text("Tidied."))
	e.start()
	var root fakeslack.Message
	e.waitFor("the root message", func() bool {
		roots := e.rootMessages()
		if len(roots) == 1 {
			root = roots[0]
		}
		return len(roots) == 1
	})
	if !strings.Contains(root.Text, "<@"+testUser+"> asked h9 to run: tidy the logs") || !strings.Contains(string(root.Blocks), "h9_root_start_"+st.ID) {
		t.Errorf("the root message posted for the start: %s %s", root.Text, root.Blocks)
	}
	e.waitMessage(root.TS, "Done:", 1)
	e.waitFor("the start forgotten", func() bool { return len(e.starts()) == 0 })
}

// A normal /h9 run forgets its start once the session is stored; a start
// left whose session was stored (h9 stopped before forgetting it) is only
// forgotten by the next start: nothing is posted or run again.
func TestStartForgottenOnceTheSessionIsStored(t *testing.T) {
	e := prepareEnv(t, t.TempDir())
	e.start()
	e.model.Enqueue(fakemodel.Text("Tidied."))
	thread := e.startSession("run", "tidy the logs")
	e.waitMessage(thread, "Done:", 1)
	e.waitFor("the start forgotten after the first commit", func() bool { return len(e.starts()) == 0 })
	var root fakeslack.Message
	for _, m := range e.rootMessages() {
		root = m
	}
	id := ""
	if i := strings.Index(string(root.Blocks), "h9_root_start_"); i >= 0 {
		id = string(root.Blocks)[i+len("h9_root_start_"):]
		id = id[:strings.IndexByte(id, '"')]
	}
	if id == "" {
		t.Fatalf("the root message carries no start: %s", root.Blocks)
	}
	if err := e.store.PutStart(e.ctx, store.Start{ID: id, Channel: testChannel, At: time.Now(), Data: json.RawMessage(`{"owner":"U1","task":"tidy the logs"}`)}); err != nil {
		t.Fatal(err)
	}
	calls := e.model.Calls()
	e.restart()
	e.waitFor("the left start forgotten", func() bool { return len(e.starts()) == 0 })
	if n := len(e.rootMessages()); n != 1 || e.model.Calls() != calls || len(e.botMessages(thread, "Done:")) != 1 {
		t.Errorf("after the restart: %d root messages, %d more model calls, %d Done messages; want nothing new",
			n, e.model.Calls()-calls, len(e.botMessages(thread, "Done:")))
	}
}

// refusingLeases is the Leases a bbolt-backed bot is given, refusing every
// acquire while refuse is set, as a store that cannot grant one would:
// bbolt's own leases are always granted, so this is the only way to play
// the refusal on it.
type refusingLeases struct {
	Leases
	refuse  *atomic.Bool
	refused *atomic.Int64
}

func (l refusingLeases) AcquireLease(ctx context.Context, key store.LeaseKey) (store.Lease, error) {
	if l.refuse.Load() {
		l.refused.Add(1)
		return store.Lease{}, errors.New("the test refuses this lease")
	}
	return l.Leases.AcquireLease(ctx, key)
}

// leaseRefusedAfterRootPost plays /h9 run whose new thread's lease cannot
// be taken right after its root message (ARCHITECTURE.md, "Lifetimes and
// deadlines"): refuse makes the store refuse leases, allow lets it grant
// them again, refused counts the refusals, sweep runs the start sweep as
// it runs once a start is old enough, st is the store the bot runs on. The user does what h9 answers: told to try again, they
// run the command again. One request must end as one session, in the
// thread the command began, with one run.
func leaseRefusedAfterRootPost(t *testing.T, e *env, refuse, allow func(), refused func() int64, sweep func(), st Store) {
	t.Helper()
	e.model.Enqueue(fakemodel.Text("Tidied."), fakemodel.Text("Tidied again."))
	refuse()
	thread := e.startSession("run", "tidy the logs")
	told := e.fakes.WaitEphemeral(testChannel, testUser, "cannot save right now")
	if refused() == 0 {
		t.Fatal("the new thread's lease was never refused: the test did not play the refusal")
	}
	allow()
	if strings.Contains(told.Text, "try again") {
		e.startSession("run", "tidy the logs") // as told
	}
	sweep()
	e.waitMessage(thread, "Done:", 1)
	e.waitFor("the start forgotten", func() bool { got, err := st.Starts(e.ctx); return err == nil && len(got) == 0 })
	if n := len(e.rootMessages()); n != 1 {
		t.Errorf("%d root messages: h9 answered %q and one request became %d sessions", n, told.Text, n)
	}
	got, err := st.ListChannel(e.ctx, testChannel)
	var threads []string
	for _, r := range got {
		threads = append(threads, r.Meta.Thread)
	}
	if err != nil || len(threads) != 1 || threads[0] != thread {
		t.Errorf("sessions stored in threads %v (%v); want one, in %s", threads, err, thread)
	}
	if n := e.model.Calls(); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if strings.Contains(told.Text, "try again") || !strings.Contains(told.Text, "starts here by itself") {
		t.Errorf("h9 answered %q; it must say the session starts by itself in this thread", told.Text)
	}
}

// On bbolt: the lease refused right after the root post; the start sweep
// gives the session to that thread, and the user is not asked to retry.
func TestStartWhoseLeaseIsRefusedFinishesInItsThread(t *testing.T) {
	testenv.Full(t, "a whole /h9 run through the fake Slack and model")
	var refuse atomic.Bool
	var refused atomic.Int64
	e := prepareEnv(t, t.TempDir(), func(c *Config) {
		c.Leases = refusingLeases{Leases: c.Leases, refuse: &refuse, refused: &refused}
	})
	e.start()
	leaseRefusedAfterRootPost(t, e, func() { refuse.Store(true) }, func() { refuse.Store(false) }, refused.Load,
		func() { e.bot.finishStarts(e.ctx, func(store.Start) bool { return true }) },
		e.store)
}

package automation

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	"github.com/h9-app/h9/workspace/forge/forgetest"
	"github.com/h9-app/h9/workspace/testenv"
)

func (s *slackSide) setOpen(channelThread string, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open[channelThread] = open
}

// kept reports whether the store still has the occurrence.
func kept(t *testing.T, st Store, automation, key string) bool {
	t.Helper()
	_, err := st.Occurrence(t.Context(), automation, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

const pruneFile = `automations:
  - name: tidy
    channel: C0123ABCD
    owner: U0123ABCD
    task: Tidy up
    on: {schedule: "0 * * * *"}
  - name: deploy
    channel: C0123ABCD
    task: 'Deploy of {{.service}} failed'
    dedupe: '{{.service}}'
    on: {webhook: {secret_env: HOOK_SECRET}}
  - name: build
    channel: C0123ABCD
    task: 'Build of {{.service}} failed'
    dedupe: '{{.service}}'
    on: {webhook: {secret_env: HOOK_SECRET}}
  - name: hook
    channel: C0123ABCD
    task: 'Hook {{.n}}'
    on: {webhook: {secret_env: HOOK_SECRET}}
`

// The sweep forgets settled occurrences 30 days old, once an hour: not a
// pending one, not one whose session is open (a repeat of its dedupe key
// is still an "Again"), not a newer one; a repeat of a forgotten key
// whose session closed fires anew, as it would have with its record.
func TestSweepPrunesOldSettledOccurrences(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	side := &slackSide{open: map[string]bool{}}
	t0 := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	clk := &clock{t: t0}
	e, c := engineFor(t, st, side, clk, "r1", pruneFile)
	ctx := t.Context()
	e.catchUp(ctx)
	deliver := func(name, body string) (string, Outcome) {
		t.Helper()
		d := Delivery{Body: []byte(body), Timestamp: fmt.Sprint(clk.Now().Unix())}
		d.Payload, _ = decodePayload(d.Body)
		a := e.WebhookAutomation(name)
		key, _, _ := a.deliveryKey(d)
		out, err := e.FireWebhook(ctx, a, d)
		if err != nil {
			t.Fatal(err)
		}
		e.after.Wait()
		return key, out
	}
	apiKey, _ := deliver("deploy", `{"service":"api"}`) // its session stays open
	buildKey, _ := deliver("build", `{"service":"x"}`)
	hookKey, _ := deliver("hook", `{"n":1}`)
	clk.Set(t0.Add(30 * time.Minute))
	e.fireDue(ctx) // tidy at 10:00
	if n, _ := side.counts(); n != 4 {
		t.Fatalf("%d sessions, want 4", n)
	}
	side.closeAll()
	side.setOpen("C0123ABCD/1700000000.000001", true) // deploy's, for api
	// Pending ones: one a stopped replica left of an automation no longer
	// loaded, one queued behind deploy's open session.
	for _, o := range []store.Occurrence{
		{Automation: "gone", Key: "webhook:left", State: store.OccurrenceRecorded, Recorded: t0, Owner: "r0", Claimed: t0},
		{Automation: "deploy", Key: "webhook:waits", State: store.OccurrenceQueued, Recorded: t0, Owner: "r0", Claimed: t0},
	} {
		if _, _, err := st.RecordOccurrence(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	e.Sweep(ctx) // the first pass: nothing is 30 days old
	if !kept(t, st, "hook", hookKey) {
		t.Fatal("a day-old occurrence was pruned")
	}

	clk.Set(t0.Add(31 * 24 * time.Hour))
	late, _ := deliver("hook", `{"n":2}`) // a newer one
	e.Sweep(ctx)
	for _, k := range []struct {
		automation, key string
		kept            bool
	}{
		{"deploy", apiKey, true},       // its session is open
		{"gone", "webhook:left", true}, // pending
		{"deploy", "webhook:waits", true},
		{"hook", late, true},
		{"build", buildKey, false},
		{"hook", hookKey, false},
		{"tidy", "schedule:2026-01-05T10:00:00Z", false},
	} {
		if got := kept(t, st, k.automation, k.key); got != k.kept {
			t.Errorf("%s %s: kept %v, want %v", k.automation, k.key, got, k.kept)
		}
	}
	// api's session is open: its dedupe key is still an Again; x's closed:
	// its key fires anew, as it would have with its record.
	before, _ := side.counts()
	if _, out := deliver("deploy", `{"service":"api","try":2}`); out.Result != ResultDeduplicated {
		t.Errorf("a repeat of an open session's dedupe key after the prune: %+v, want deduplicated", out)
	}
	if _, out := deliver("build", `{"service":"x","try":2}`); out.Result != ResultStarted {
		t.Errorf("a repeat of a closed session's dedupe key after the prune: %+v, want started", out)
	}
	if n, _ := side.counts(); n != before+1 || c.get("deploy/webhook/deduplicated") != 1 {
		t.Errorf("%d sessions after the repeats, want %d; counts %v", n, before+1, c.m)
	}

	// Once an hour: an occurrence that became 30 days old meanwhile waits
	// for the next pass.
	old := store.Occurrence{Automation: "hook", Key: "webhook:old", State: store.OccurrenceSkipped, Recorded: t0, Owner: "r0"}
	if _, _, err := st.RecordOccurrence(ctx, old); err != nil {
		t.Fatal(err)
	}
	clk.Set(clk.Now().Add(30 * time.Minute))
	e.Sweep(ctx)
	if !kept(t, st, "hook", "webhook:old") {
		t.Error("pruned twice within an hour")
	}
	clk.Set(clk.Now().Add(31 * time.Minute))
	e.Sweep(ctx)
	if kept(t, st, "hook", "webhook:old") {
		t.Error("not pruned an hour after the last pass")
	}
}

// A pass is bounded: batches of a few, a few batches; what is left goes
// on at the next sweep (not an hour later), past the ones kept open.
func TestPrunePassIsBounded(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	side := &slackSide{open: map[string]bool{"C1/1.1": true}}
	t0 := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	clk := &clock{t: t0.Add(40 * 24 * time.Hour)}
	e, _ := engineFor(t, st, side, clk, "r1", hourly)
	e.prunes.batch, e.prunes.batches = 3, 2
	ctx := t.Context()
	// The three oldest are kept: their thread's session is open.
	for i := range 13 {
		o := store.Occurrence{Automation: "tidy", Key: fmt.Sprint("k", i), State: store.OccurrenceStarted, Recorded: t0.Add(time.Duration(i) * time.Minute)}
		if i < 3 {
			o.Channel, o.Thread = "C1", "1.1"
		}
		if _, _, err := st.RecordOccurrence(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.prune(ctx); n != 2 {
		t.Errorf("the first pass forgot %d, want 2 (two batches of 3: k0-k2 kept open, then k2-k4)", n)
	}
	if n := e.prune(ctx); n != 6 {
		t.Errorf("the next sweep's pass forgot %d, want 6 (k5-k10)", n)
	}
	if n := e.prune(ctx); n != 2 {
		t.Errorf("the third pass forgot %d, want the last 2", n)
	}
	if n := e.prune(ctx); n != 0 {
		t.Errorf("a pass with nothing left ran again at once (forgot %d)", n)
	}
	for i := range 13 {
		if got := kept(t, st, "tidy", fmt.Sprint("k", i)); got != (i < 3) {
			t.Errorf("k%d: kept %v, want %v", i, got, i < 3)
		}
	}
}

// A branch's head still failing 30 days on does not start a second
// session once its occurrence is pruned (the cursor gives each failure
// once); while the head's session is open its record is kept, and a new
// failure on it is an "Again" in that thread.
func TestPrunedCheckHeadDoesNotFireAgain(t *testing.T) {
	testenv.Need(t, "git")
	t.Parallel()
	bare, head := forgetest.Bare(t)
	gh := fakegithub.New("ghp_good")
	t.Cleanup(gh.Close)
	gh.AddRepo("acme/api", bare, true)
	src := `automations:
  - name: red
    channel: C0123ABCD
    owner: U0123ABCD
    repo: acme/api
    task: Make the build green
    on: {check: {branch: ` + forgetest.Branch + `}}
`
	st := boltStore(t)
	side := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Now()}
	e, _ := engineFor(t, st, side, clk, "r1", src)
	e.SetForges(githubForges{gh})
	ctx := t.Context()
	poll := func() {
		clk.Set(clk.Now().Add(DefaultPoll))
		e.pollForges(ctx)
	}
	poll() // first load
	gh.AddCheckRun("acme/api", head, "unit-tests", "github-actions", "failure", "FAIL")
	poll()
	poll()
	if n, _ := side.counts(); n != 1 {
		t.Fatalf("%d sessions for one failing head, want 1", n)
	}
	// Its session open 31 days on: kept; a new failure is an Again.
	clk.Set(clk.Now().Add(31 * 24 * time.Hour))
	e.Sweep(ctx)
	if !kept(t, st, "red", "check:"+head) {
		t.Fatal("the open session's head was pruned")
	}
	gh.AddCheckRun("acme/api", head, "lint", "github-actions", "failure", "FAIL")
	for range 10 { // a settled head's checks are read every tenth poll
		poll()
	}
	if n, posts := side.counts(); n != 1 || len(posts) != 1 {
		t.Fatalf("a new failure on the open head: %d sessions, posts %q; want 1 and an Again", n, posts)
	}
	// Closed, 31 days more: pruned, and the head still failing starts
	// nothing.
	side.closeAll()
	clk.Set(clk.Now().Add(31 * 24 * time.Hour))
	e.Sweep(ctx)
	if kept(t, st, "red", "check:"+head) {
		t.Fatal("the closed session's head was not pruned")
	}
	for range 10 {
		poll()
	}
	if n, _ := side.counts(); n != 1 {
		t.Errorf("the head still failing after its occurrence was pruned: %d sessions, want 1", n)
	}
}

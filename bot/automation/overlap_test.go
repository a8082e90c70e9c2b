package automation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/workspace/testenv"
)

// slowSide is a Slack side whose root messages take a while to post, as
// Slack's do: starts that overlap in time are the case overlap decides.
type slowSide struct {
	*slackSide
	delay time.Duration
}

func (s slowSide) StartSession(ctx context.Context, r StartRequest) (Started, error) {
	time.Sleep(s.delay)
	return s.slackSide.StartSession(ctx, r)
}

const burstHook = "automations:\n  - name: deploy\n    channel: C0123ABCD\n    owner: U0123ABCD\n    task: 'Deploy {{.n}}'\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"

// burst delivers n webhooks with distinct bodies (numbered from from) at
// once, spread over the engines, and waits for what each engine records
// after its answers.
func burst(t *testing.T, engines []*Engine, from, n int) (keys []string, results map[string]int) {
	t.Helper()
	results = map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		e := engines[i%len(engines)]
		body := fmt.Appendf(nil, `{"n":%d}`, from+i)
		d := Delivery{Body: body, Timestamp: "1767600000"}
		d.Payload, _ = decodePayload(body)
		key, _, _ := e.WebhookAutomation("deploy").deliveryKey(d)
		keys = append(keys, key)
		wg.Go(func() {
			<-gate
			out, err := e.FireWebhook(t.Context(), e.WebhookAutomation("deploy"), d)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			results[out.Result]++
			mu.Unlock()
		})
	}
	close(gate)
	wg.Wait()
	for _, e := range engines {
		e.after.Wait()
	}
	return keys, results
}

// occurrenceStates counts the stored occurrences of deploy by state.
func occurrenceStates(t *testing.T, st Store, keys []string) map[store.OccurrenceState]int {
	t.Helper()
	got := map[store.OccurrenceState]int{}
	for _, k := range keys {
		o, err := st.Occurrence(t.Context(), "deploy", k)
		if err != nil {
			t.Fatal(err)
		}
		got[o.State]++
	}
	return got
}

// checkBurst: of n webhooks at once to an automation whose session stays
// open, exactly one starts a session and the others are skipped (or
// queued), in the answers, the store and the sessions started.
func checkBurst(t *testing.T, engines []*Engine, side *slackSide, st Store, overlap string, n int) {
	t.Helper()
	keys, results := burst(t, engines, 0, n)
	other := map[string]store.OccurrenceState{"skip": store.OccurrenceSkipped, "queue": store.OccurrenceQueued}[overlap]
	otherResult := map[string]string{"skip": ResultSkipped, "queue": ResultQueued}[overlap]
	if started, _ := side.counts(); started != 1 {
		t.Errorf("overlap %s: %d webhooks at once started %d sessions, want 1 (%v)", overlap, n, started, results)
	}
	if results[ResultStarted] != 1 || results[otherResult] != n-1 {
		t.Errorf("overlap %s: answers %v, want 1 started, %d %s", overlap, results, n-1, otherResult)
	}
	if got := occurrenceStates(t, st, keys); got[store.OccurrenceStarted] != 1 || got[other] != n-1 {
		t.Errorf("overlap %s: stored %v, want 1 started, %d %s", overlap, got, n-1, other)
	}
}

// overlap: skip is strict under a burst on one replica: the start that
// takes the automation's session slot is the only one.
func TestOverlapSkipStrictUnderBurst(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	side := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, c := engineFor(t, st, slowSide{side, 5 * time.Millisecond}, clk, "r1", burstHook)
	checkBurst(t, []*Engine{e}, side, st, "skip", 12)
	if c.get("deploy/webhook/started") != 1 || c.get("deploy/webhook/skipped") != 11 {
		t.Errorf("counts %v", c.m)
	}
	// Once that session closed, the next webhook starts one.
	side.closeAll()
	if _, results := burst(t, []*Engine{e}, 100, 1); results[ResultStarted] != 1 {
		t.Errorf("after the session closed: %v, want started", results)
	}
}

// overlap: queue under a burst: one starts, the others wait queued and
// start one at a time, each after the previous session closed.
func TestOverlapQueueUnderBurst(t *testing.T) {
	t.Parallel()
	st := boltStore(t)
	side := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	e, _ := engineFor(t, st, slowSide{side, 5 * time.Millisecond}, clk, "r1", burstHook+"    overlap: queue\n")
	const n = 6
	checkBurst(t, []*Engine{e}, side, st, "queue", n)
	e.Sweep(t.Context()) // the first session is still open: nothing starts
	if started, _ := side.counts(); started != 1 {
		t.Fatalf("a queued one started while the first session is open: %d sessions", started)
	}
	for i := 2; i <= n; i++ {
		side.closeAll()
		e.Sweep(t.Context())
		e.Sweep(t.Context()) // a second sweep starts none while that one is open
		if started, _ := side.counts(); started != i {
			t.Fatalf("after %d sessions closed: %d sessions, want %d", i-1, started, i)
		}
	}
}

// Two replicas on one PostgreSQL database: a burst of webhooks spread
// over both starts one session; with queue, the others wait.
func TestOverlapStrictAcrossReplicasOnPostgres(t *testing.T) {
	testenv.Need(t, "postgres")
	for _, overlap := range []string{"skip", "queue"} {
		url := pgtest.New(t)
		side := &slackSide{open: map[string]bool{}}
		clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
		var engines []*Engine
		var first Store
		for _, r := range []string{"r1", "r2"} {
			st, err := pgstore.Open(context.Background(), url, pgstore.Options{Replica: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			e, _ := engineFor(t, st, slowSide{side, 5 * time.Millisecond}, clk, r, burstHook+"    overlap: "+overlap+"\n")
			engines = append(engines, e)
			if first == nil {
				first = st
			}
		}
		checkBurst(t, engines, side, first, overlap, 10)
		if overlap == "queue" {
			side.closeAll()
			var wg sync.WaitGroup
			for _, e := range engines {
				wg.Go(func() { e.Sweep(t.Context()) })
			}
			wg.Wait()
			if started, _ := side.counts(); started != 2 {
				t.Errorf("queue: after the first closed, two replicas sweeping started %d in all, want 2", started)
			}
		}
	}
}

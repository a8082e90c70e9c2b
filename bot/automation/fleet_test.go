package automation

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/workspace/testenv"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Two replicas on one PostgreSQL database, each with its own engine and
// its own connection pool, fire each occurrence of a schedule once, and a
// webhook delivered to both once.
func TestFleetFiresOnceOnPostgres(t *testing.T) {
	testenv.Need(t, "postgres")
	url := pgtest.New(t)
	bot := &slackSide{open: map[string]bool{}}
	clk := &clock{t: time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)}
	src := hourly + "  - name: deploy\n    channel: C0123ABCD\n    task: Deploy\n    on: {webhook: {secret_env: HOOK_SECRET}}\n"
	var engines []*Engine
	for _, r := range []string{"r1", "r2"} {
		st, err := pgstore.Open(context.Background(), url, pgstore.Options{Replica: r})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		e, _ := engineFor(t, st, bot, clk, r, src)
		e.catchUp(t.Context())
		engines = append(engines, e)
	}
	for h := 10; h <= 12; h++ {
		clk.Set(time.Date(2026, 1, 5, h, 0, 0, 0, time.UTC))
		var wg sync.WaitGroup
		for _, e := range engines {
			wg.Go(func() { e.fireDue(t.Context()) })
		}
		wg.Wait()
		bot.closeAll()
	}
	if n, _ := bot.counts(); n != 3 {
		t.Fatalf("%d sessions for three occurrences on two replicas, want 3", n)
	}
	body := []byte(`{"x":1}`)
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, e := range engines {
		wg.Go(func() {
			p, _ := decodePayload(body)
			out, err := e.FireWebhook(t.Context(), e.WebhookAutomation("deploy"), Delivery{Body: body, Payload: p, Timestamp: "1767600000"})
			if err != nil {
				t.Error(err)
			}
			results[i] = out.Result
		})
	}
	wg.Wait()
	if n, _ := bot.counts(); n != 4 {
		t.Errorf("one webhook delivered to two replicas: %d sessions in all, want 4 (%v)", n, results)
	}
}

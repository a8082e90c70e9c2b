package bot

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// In a fleet, a start a killed replica left (its root message posted, the
// session never stored) is finished by exactly one of the replicas that
// start afterwards: one session in that thread, one run, one Done; and a
// start younger than startSweepAge, maybe another replica's in flight, is
// left alone.
func TestFleetFinishesALeftStartOnce(t *testing.T) {
	f := newFleetEnv(t)
	seed, err := pgstore.Open(f.ctx, f.url, pgstore.Options{Replica: "seed", LeaseTTL: fleetTTL})
	if err != nil {
		t.Fatal(err)
	}
	d := startData{Team: "T1", Owner: testUser, Task: "tidy the logs", Mode: planning.PlanModeDefault}
	data, _ := json.Marshal(d)
	old := store.Start{ID: "oldstart00000001", Channel: testChannel, At: time.Now().Add(-startSweepAge - time.Minute), Data: data}
	young := store.Start{ID: "youngstart000001", Channel: testChannel, At: time.Now(), Data: data}
	for _, st := range []store.Start{old, young} {
		if err := seed.PutStart(f.ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	seed.Close()
	root := render.WithStart(rootMessage(d), old.ID)
	api := slack.New(f.slack.Options().BotToken, slack.OptionAPIURL(f.slack.APIURL()))
	_, thread, err := api.PostMessageContext(f.ctx, testChannel, slack.MsgOptionText(root.Text, false), slack.MsgOptionBlocks(root.Blocks...))
	if err != nil {
		t.Fatal(err)
	}
	f.model.Enqueue(fakemodel.Text("Tidied."))
	f.start("a")
	f.start("b")
	if err := f.slack.WaitConnections(f.ctx, 2); err != nil {
		t.Fatal(err)
	}
	f.waitMessage(thread, "Done:", 1)
	f.checkOneOfEach(thread, "Done:")
	if n := len(f.rootMessages()); n != 1 {
		t.Errorf("%d root messages, want the killed replica's only (the young start is not taken)", n)
	}
	if calls := f.model.Calls(); calls != 1 {
		t.Errorf("%d model calls, want one run", calls)
	}
	check, err := pgstore.Open(f.ctx, f.url, pgstore.Options{Replica: "check", LeaseTTL: fleetTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	f.waitFor("only the young start left", func() bool {
		got, err := check.Starts(f.ctx)
		return err == nil && len(got) == 1 && got[0].ID == young.ID
	})
}

// On PostgreSQL: the database refuses the new thread's lease right after
// the root post; the start sweep gives the session to that thread, and
// the user is not asked to retry.
func TestFleetStartWhoseLeaseIsRefusedFinishesInItsThread(t *testing.T) {
	f := newFleetEnv(t, "a")
	a := f.replicas["a"]
	var leases *dbRefusal
	leaseRefusedAfterRootPost(t, f.env,
		func() { leases = refuse(t, f.url, "h9_leases", "true") }, func() { leases.allow() }, func() int64 { return leases.refused() },
		func() { a.bot.finishStarts(f.ctx, func(store.Start) bool { return true }) },
		a.store)
}

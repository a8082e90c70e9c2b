package bot

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store"
)

// A replica whose lease on a session lapses while its run waits on the
// model (paused past the TTL, say), before anything told its actor,
// uploads nothing the model then asks share_file for: the run's Slack
// calls are under the session's lease like the actor's own
// (bot/slackapi's lease gate). The lapse is played by the replica's own
// store giving the lease up behind the actor's back, so its local clock
// and the database both say it is gone while no loss is reported.
func TestFleetShareFileAfterTheLeaseLapsed(t *testing.T) {
	f := newFleetEnv(t, "a")
	asked, lapsed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(lapsed) }) })
	f.model.Enqueue(fakemodel.ToolCall("write_file", `{"path":"report.txt","content":"stale"}`))
	var calls int
	f.model.SetHandler(func(openai.ChatCompletionRequest) fakemodel.Reply {
		if calls++; calls > 1 {
			return fakemodel.Text("shared")
		}
		close(asked)
		<-lapsed
		return fakemodel.ToolCall("share_file", `{"path":"report.txt","title":"Stale report"}`)
	})
	thread := f.startSession("run", "share a report")
	<-asked
	a := f.replicas["a"]
	if err := a.store.ReleaseLease(f.ctx, f.heldLease(thread)); err != nil {
		t.Fatal(err)
	}
	once.Do(func() { close(lapsed) })
	f.waitFor("the run over and its actor gone", func() bool {
		a.bot.reg.mu.Lock()
		defer a.bot.reg.mu.Unlock()
		return len(a.bot.reg.actors) == 0
	})
	if n := f.callsBy("a", "files.getUploadURLExternal", ""); n != 0 {
		t.Errorf("the replica began %d uploads after its lease lapsed", n)
	}
	if files := f.slack.Files(testChannel); len(files) != 0 {
		t.Errorf("%d files shared into the thread after the lease lapsed: %+v", len(files), files)
	}
}

// heldLease reads the lease of thread from the fleet's database.
func (f *fleetEnv) heldLease(thread string) store.Lease {
	f.t.Helper()
	c, err := pgx.Connect(f.ctx, f.url)
	if err != nil {
		f.t.Fatal(err)
	}
	defer c.Close(context.Background())
	l := store.Lease{Key: store.LeaseKey{Channel: testChannel, Thread: thread}}
	err = c.QueryRow(f.ctx, "SELECT owner, token FROM h9_leases WHERE channel = $1 AND thread = $2",
		testChannel, thread).Scan(&l.Owner, &l.Token)
	if err != nil {
		f.t.Fatalf("reading the lease of %s: %v", thread, err)
	}
	return l
}

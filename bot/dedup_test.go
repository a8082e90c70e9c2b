package bot

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
)

func openTestDB(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Keys seen by one process are refused by the next on the same DB.
func TestDedupPersistsAcrossRestart(t *testing.T) {
	t.Parallel()
	db := openTestDB(t)
	d, err := newDedup(openStore(t, db), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	d.start()
	if !d.first("ev:E1") || d.first("ev:E1") {
		t.Fatal("in-memory dedup broken")
	}
	d.first("msg:C1/1.1")
	d.close()

	d2, err := newDedup(openStore(t, db), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ev:E1", "msg:C1/1.1"} {
		if d2.first(k) {
			t.Errorf("%s was handled again after a restart", k)
		}
	}
	if !d2.first("ev:E2") {
		t.Error("a new key was refused")
	}
}

// Keys older than the TTL are not reloaded, and memory stays bounded (the
// store's own bound is in agent/store/storetest).
func TestDedupExpiresAndBounds(t *testing.T) {
	t.Parallel()
	db := openTestDB(t)
	d, err := newDedup(openStore(t, db), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	d.now = func() time.Time { return time.Now().Add(-2 * store.DedupTTL) }
	d.start()
	d.first("ev:old")
	d.close()

	d, err = newDedup(openStore(t, db), discardLog())
	if err != nil {
		t.Fatal(err)
	}
	if !d.first("ev:old") {
		t.Error("an expired key is still remembered")
	}
	for i := range dedupSize + 10 {
		d.first(fmt.Sprint("ev:", i))
	}
	if n := len(d.seen); n > dedupSize {
		t.Errorf("memory holds %d keys, want at most %d", n, dedupSize)
	}
	if d.first(fmt.Sprint("ev:", dedupSize+9)) || !d.first("ev:0") {
		t.Error("memory did not keep the newest keys and drop the oldest")
	}
}

// An event handled before a restart and redelivered (same event_id, new
// envelope) after it runs once: the seen keys live in the store.
func TestRedeliveryAfterRestartRunsOnce(t *testing.T) {
	e := newEnv(t)
	thread, _ := e.planned("dedup across restarts", "a:pending")

	e.model.Enqueue(planReplies("Plan two.", "a:pending", "b:pending")...)
	reply := map[string]any{"type": "message", "user": testUser, "text": "also b", "channel": testChannel,
		"ts": "1800000000.000042", "thread_ts": thread, "channel_type": "channel"}
	if _, err := e.slack.SendEvent(e.ctx, "EvRestart1", reply); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(thread, render.ActionApproveAuto, 2)
	calls := e.model.Calls()

	e.restart()
	if _, err := e.slack.SendEvent(e.ctx, "EvRestart1", reply); err != nil {
		t.Fatal(err)
	}
	// The same message under a new event id (app_mention/message pair) too.
	if _, err := e.slack.SendEvent(e.ctx, "EvRestart2", reply); err != nil {
		t.Fatal(err)
	}
	// "@h9 status" goes through the session's inbox after the redeliveries.
	if _, err := e.slack.Mention(e.ctx, testUser, testChannel, thread, "status"); err != nil {
		t.Fatal(err)
	}
	e.waitEphemeral(testChannel, testUser, "dedup across restarts")
	if got := e.model.Calls(); got != calls {
		t.Errorf("model calls = %d after the redelivery, want %d (handled once)", got, calls)
	}
	if n := len(e.botMessages(thread, render.ActionApproveAuto)); n != 2 {
		t.Errorf("%d reviews, want 2", n)
	}
}

// The echoes of the bot's own posts need no dedup: only the command's
// envelope is remembered, not the root, checklist and outcome posts that
// come back as message events.
func TestOwnEchoesAreNotRemembered(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(fakemodel.Text("All done."))
	thread := e.startSession("run", "echo check")
	e.waitMessage(thread, "All done.", 1)
	e.waitFor("the echoes of the root, checklist and outcome posts", func() bool {
		return len(e.slack.Calls("chat.postMessage"))+len(e.slack.Calls("chat.startStream")) >= 3 // the outcome edits the stream
	})
	e.stop() // flushes the dedup keys
	keys, err := e.store.Claimed(e.ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !strings.HasPrefix(keys[0], "env:") {
		t.Errorf("remembered %q, want only the slash command's envelope", keys)
	}
}

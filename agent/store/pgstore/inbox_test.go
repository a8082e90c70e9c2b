package pgstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// heard collects the threads a store is told have inbox items.
func heard(s *Store) chan store.LeaseKey {
	ch := make(chan store.LeaseKey, 100)
	s.OnInbox(func(k store.LeaseKey) { ch <- k })
	return ch
}

func wantHeard(t *testing.T, ch chan store.LeaseKey, k store.LeaseKey) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == k {
				return
			}
		case <-deadline:
			t.Fatalf("no notification for %s", k)
		}
	}
}

// An item posted by one replica wakes the others and waits, in order,
// for the thread's holder; only the holder takes it.
func TestInboxWakesAndWaitsForTheHolder(t *testing.T) {
	a, b, _ := replicas(t, time.Minute)
	ch := heard(b)
	ctx := t.Context()
	must(t, a.PostInbox(ctx, key, []byte(`{"n":1}`)))
	must(t, a.PostInbox(ctx, key, []byte(`{"n":2}`)))
	wantHeard(t, ch, key)
	if _, err := a.TakeInbox(ctx, key); !errors.Is(err, store.ErrFenced) {
		t.Errorf("TakeInbox without the lease: %v, want ErrFenced", err)
	}
	acquire(t, b, key)
	items, err := b.TakeInbox(ctx, key)
	must(t, err)
	if len(items) != 2 || string(items[0]) != `{"n":1}` || string(items[1]) != `{"n":2}` {
		t.Errorf("items = %q, want both in order", items)
	}
	if again, err := b.TakeInbox(ctx, key); err != nil || len(again) != 0 {
		t.Errorf("a second take = %q, %v; want nothing", again, err)
	}
}

// After its listening connection was cut, a store reconnects and reports
// every thread with items waiting: a notification sent meanwhile is lost,
// the item is not.
func TestInboxListenerReconnects(t *testing.T) {
	a, b, url := replicas(t, time.Minute)
	ch := heard(b)
	ctx := t.Context()
	other := store.LeaseKey{Channel: "C2", Thread: "1.2"}
	must(t, a.PostInbox(ctx, other, []byte(`{}`))) // proves b listens before the cut
	wantHeard(t, ch, other)
	cut := query[bool](t, url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '%-listen' AND datname = current_database()")
	if len(cut) != 2 { // a's listener and b's
		t.Fatalf("cut %d listening connections, want 2", len(cut))
	}
	must(t, a.PostInbox(ctx, key, []byte(`{}`)))
	wantHeard(t, ch, key)
}

// Orphans: an active session whose lease lapsed or was never taken, and
// inbox items nobody holds; not a session or thread a live lease covers.
func TestOrphans(t *testing.T) {
	a, b, url := replicas(t, time.Minute)
	ctx := t.Context()
	held := store.LeaseKey{Channel: "C1", Thread: "2.2"}
	lapsed := store.LeaseKey{Channel: "C1", Thread: "3.3"}
	mail := store.LeaseKey{Channel: "C9", Thread: "4.4"}
	for _, k := range []store.LeaseKey{key, held, lapsed} {
		l := acquire(t, a, k)
		r := rec(`{}`)
		r.Meta.ID, r.Meta.Thread = "T1/C1/"+k.Thread, k.Thread
		must(t, a.PutSession(ctx, r))
		if k == key {
			must(t, a.ReleaseLease(ctx, l))
		}
	}
	exec(t, url, "UPDATE h9_leases SET expires = now() WHERE thread = '3.3'")
	must(t, b.PostInbox(ctx, mail, []byte(`{}`)))
	must(t, b.PostInbox(ctx, held, []byte(`{}`)))
	got, err := b.Orphans(ctx)
	must(t, err)
	want := []store.LeaseKey{key, lapsed, mail}
	slices.SortFunc(got, func(x, y store.LeaseKey) int { return cmpKeys(x, y) })
	if !slices.Equal(got, want) {
		t.Errorf("Orphans = %v, want %v", got, want)
	}
}

func cmpKeys(x, y store.LeaseKey) int {
	if x.Channel != y.Channel {
		return map[bool]int{true: -1, false: 1}[x.Channel < y.Channel]
	}
	if x.Thread == y.Thread {
		return 0
	}
	return map[bool]int{true: -1, false: 1}[x.Thread < y.Thread]
}

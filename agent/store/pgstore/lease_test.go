package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgtest"
)

var key = store.LeaseKey{Channel: "C1", Thread: "1700000000.000100"}

// replicas opens two fenced Stores, "a" and "b", on one new database.
func replicas(t *testing.T, ttl time.Duration) (a, b *Store, url string) {
	t.Helper()
	url = pgtest.New(t)
	a = open(t, url, Options{Replica: "a", LeaseTTL: ttl})
	b = open(t, url, Options{Replica: "b", LeaseTTL: ttl})
	return a, b, url
}

func acquire(t *testing.T, s *Store, k store.LeaseKey) store.Lease {
	t.Helper()
	l, err := s.AcquireLease(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rec is a session record in key's thread.
func rec(data string) store.SessionRecord {
	return store.SessionRecord{
		Meta: store.SessionMeta{ID: "T1/C1/1700000000.000100", Channel: key.Channel, Thread: key.Thread, Owner: "U1", Active: true, Updated: time.Now()},
		Data: json.RawMessage(data),
	}
}

func msg(s string) []json.RawMessage { return []json.RawMessage{json.RawMessage(`"` + s + `"`)} }

func TestLeaseHasOneHolderAtATime(t *testing.T) {
	a, b, _ := replicas(t, time.Minute)
	la := acquire(t, a, key)
	held, err := b.AcquireLease(t.Context(), key)
	if !errors.Is(err, store.ErrLeaseHeld) || held.Owner != "a" {
		t.Fatalf("b's acquire while a holds: %+v, %v; want ErrLeaseHeld naming a", held, err)
	}
	again := acquire(t, a, key) // a new hold by the same replica
	if again.Token <= la.Token || a.LeaseValid(la) || !a.LeaseValid(again) {
		t.Errorf("a's second acquire: token %d after %d; old valid %t, new valid %t", again.Token, la.Token, a.LeaseValid(la), a.LeaseValid(again))
	}
	if err := a.ReleaseLease(t.Context(), la); err != nil { // the older hold: nothing happens
		t.Fatal(err)
	}
	if _, err := b.AcquireLease(t.Context(), key); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("releasing a superseded hold freed the key: %v", err)
	}
	if err := a.ReleaseLease(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	lb := acquire(t, b, key)
	if lb.Owner != "b" || lb.Token <= again.Token || a.LeaseValid(again) {
		t.Errorf("after a released: b got %+v (a's was token %d)", lb, again.Token)
	}
}

// A fenced replica writes a session only under its thread's lease; the
// agent's writes, which name only the session, follow the lease of the
// record the replica saved.
func TestWritesNeedTheLease(t *testing.T) {
	a, _, _ := replicas(t, time.Minute)
	ctx := t.Context()
	r := rec(`{"v":1}`)
	if err := a.PutSession(ctx, r); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("PutSession without the lease: %v, want ErrFenced", err)
	}
	l := acquire(t, a, key)
	must(t, a.PutSession(ctx, r))
	must(t, a.AppendStep(ctx, r.Meta.ID, store.Step{First: 0, Messages: msg("one")}))
	if err := a.AppendStep(ctx, "T1/C2/1.1", store.Step{First: 0, Messages: msg("x")}); !errors.Is(err, store.ErrFenced) {
		t.Errorf("a step for a session no lease covers: %v, want ErrFenced", err)
	}
	must(t, a.ReleaseLease(ctx, l))
	wantFenced(t, a, r)
	wantStored(t, a, r.Meta.ID, `{"v":1}`, 1)
}

// A replica paused past its lease: once another replica took the lease
// over, none of its writes lands — the database refuses them even while
// the paused replica still believes it holds the lease — and its next
// renewal tells it the lease is lost.
func TestPausedOwnerWritesNothingAfterTakeover(t *testing.T) {
	a, b, url := replicas(t, 2*time.Second)
	ctx := t.Context()
	la := acquire(t, a, key)
	r := rec(`{"v":1}`)
	must(t, a.PutSession(ctx, r))
	must(t, a.AppendStep(ctx, r.Meta.ID, store.Step{First: 0, Messages: msg("one")}))
	a.stopRenewing() // a is paused: its lease lapses
	lost := make(chan store.Lease, 1)
	a.OnLeaseLost(func(l store.Lease) { lost <- l })
	exec(t, url, "UPDATE h9_leases SET expires = now()") // make the wait for the TTL short
	lb := acquire(t, b, key)
	if !a.LeaseValid(la) {
		t.Fatal("a's local deadline already passed: the database's refusal would not be tested")
	}
	wantFenced(t, a, r) // the refusal is the database's: a still believes it holds the lease
	must(t, b.PutSession(ctx, rec(`{"v":2}`)))
	must(t, b.AppendStep(ctx, r.Meta.ID, store.Step{First: 1, Messages: msg("two")}))
	wantStored(t, b, r.Meta.ID, `{"v":2}`, 2)
	a.renew() // what a's renewer does first on resuming
	select {
	case l := <-lost:
		if l.Token != la.Token {
			t.Errorf("lost %+v, want a's hold %+v", l, la)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's renewal did not report the lease lost")
	}
	if a.LeaseValid(la) || !b.LeaseValid(lb) {
		t.Errorf("after a's renewal: a valid %t, b valid %t", a.LeaseValid(la), b.LeaseValid(lb))
	}
}

// wantFenced: every kind of session write by s is refused.
func wantFenced(t *testing.T, s *Store, r store.SessionRecord) {
	t.Helper()
	ctx, id := t.Context(), r.Meta.ID
	stale := rec(`{"v":"stale"}`)
	for what, err := range map[string]error{
		"PutSession":     s.PutSession(ctx, stale),
		"AppendStep":     s.AppendStep(ctx, id, store.Step{First: 1, Messages: msg("stale")}),
		"SaveTodos":      s.SaveTodos(ctx, id, nil),
		"ReplaceHistory": s.ReplaceHistory(ctx, id, msg("stale"), nil),
	} {
		if !errors.Is(err, store.ErrFenced) {
			t.Errorf("%s by a replica without the lease: %v, want ErrFenced", what, err)
		}
	}
}

// wantStored: the record's data and the history's length are as given.
func wantStored(t *testing.T, s *Store, id, data string, messages int) {
	t.Helper()
	got, err := s.FindThread(t.Context(), key.Channel, key.Thread)
	must(t, err)
	if string(got.Data) != data {
		t.Errorf("record data = %s, want %s", got.Data, data)
	}
	sess, err := s.LoadSession(t.Context(), id)
	must(t, err)
	if len(sess.Messages) != messages || sess.Todos != nil {
		t.Errorf("session holds %d messages and todos %v, want %d messages and no todos", len(sess.Messages), sess.Todos, messages)
	}
}

// Renewals extend every held lease; a lease renewed late (past its local
// deadline) is dropped and reported instead of extended.
func TestRenewalExtendsOrDrops(t *testing.T) {
	a, _, url := replicas(t, time.Minute)
	la := acquire(t, a, key)
	before := query[time.Time](t, url, "SELECT expires FROM h9_leases")[0]
	a.renew()
	renewed := query[time.Time](t, url, "SELECT expires FROM h9_leases")[0]
	if !renewed.After(before) {
		t.Errorf("renewal left expires at %v (was %v)", renewed, before)
	}
	lost := make(chan store.Lease, 1)
	a.OnLeaseLost(func(l store.Lease) { lost <- l })
	a.holds.mu.Lock()
	a.holds.leases[key].until = time.Now().Add(-time.Millisecond) // as after a long pause
	a.holds.mu.Unlock()
	a.renew()
	if len(lost) != 1 || a.LeaseValid(la) {
		t.Fatalf("a lease past its local deadline: lost %d, still valid %t", len(lost), a.LeaseValid(la))
	}
	if e := query[time.Time](t, url, "SELECT expires FROM h9_leases")[0]; !e.Equal(renewed) {
		t.Errorf("the late lease was extended to %v (was %v)", e, renewed)
	}
}

// A takeover cannot interleave with a write: the write's fence holds the
// lease row, so a replica taking over a lease that expired meanwhile waits
// until the write has committed, and the write is whole.
func TestTakeoverWaitsForTheWriteInFlight(t *testing.T) {
	a, b, url := replicas(t, time.Minute)
	la := acquire(t, a, key)
	a.stopRenewing()
	exec(t, url, "UPDATE h9_leases SET expires = now() + interval '2 seconds'")
	tx, err := a.pool.Begin(t.Context())
	must(t, err)
	defer tx.Rollback(context.Background())
	_, err = tx.Exec(t.Context(), "SELECT h9_fence($1, $2, $3, $4)", key.Channel, key.Thread, la.Owner, la.Token)
	must(t, err)
	for len(query[bool](t, url, "SELECT true FROM h9_leases WHERE expires < now()")) == 0 {
		time.Sleep(50 * time.Millisecond) // until the lease expired, by the database's clock
	}
	taken := make(chan error, 1)
	go func() { _, err := b.AcquireLease(context.Background(), key); taken <- err }()
	select {
	case err := <-taken:
		t.Fatalf("b took the lease over while a's write held its fence (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	_, err = tx.Exec(t.Context(), "INSERT INTO h9_channel_settings VALUES ('C1', 'k', 'written under the lease')")
	must(t, err)
	must(t, tx.Commit(t.Context()))
	if err := <-taken; err != nil {
		t.Errorf("b's takeover after the write: %v", err)
	}
	if v, _ := b.ChannelSetting(t.Context(), "C1", "k"); v != "written under the lease" {
		t.Errorf("the write under the lease = %q", v)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Every change of a replica's leases is told to OnLeaseChange: acquired,
// renewed (n at a time), released, taken over and lost.
func TestLeaseChanges(t *testing.T) {
	url := pgtest.New(t)
	type change struct {
		c store.LeaseChange
		n int
	}
	record := func() (*[]change, func(store.LeaseChange, int)) {
		var got []change
		return &got, func(c store.LeaseChange, n int) { got = append(got, change{c, n}) }
	}
	aGot, aHook := record()
	bGot, bHook := record()
	a := open(t, url, Options{Replica: "a", LeaseTTL: time.Minute, OnLeaseChange: aHook})
	b := open(t, url, Options{Replica: "b", LeaseTTL: time.Minute, OnLeaseChange: bHook})
	a.stopRenewing() // the test renews by hand; the hooks are then called on this goroutine only
	b.stopRenewing()
	other := store.LeaseKey{Channel: "C2", Thread: "2.2"}
	la := acquire(t, a, key)
	acquire(t, a, other)
	a.renew()
	must(t, a.ReleaseLease(t.Context(), la))
	exec(t, url, "UPDATE h9_leases SET expires = now() WHERE thread = '2.2'")
	acquire(t, b, other)
	a.renew()
	want := []change{{store.LeaseAcquired, 1}, {store.LeaseAcquired, 1}, {store.LeaseRenewed, 2},
		{store.LeaseReleased, 1}, {store.LeaseRenewed, 0}, {store.LeaseLost, 1}}
	if !slices.Equal(*aGot, want) {
		t.Errorf("a's changes:\n got %v\nwant %v", *aGot, want)
	}
	if wantB := []change{{store.LeaseTakenOver, 1}}; !slices.Equal(*bGot, wantB) {
		t.Errorf("b's changes = %v, want %v", *bGot, wantB)
	}
}

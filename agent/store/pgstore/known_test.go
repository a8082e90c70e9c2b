package pgstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// A holder answers FindThread from what it read or wrote under its hold
// (no round trip), and from the database once the hold is gone.
func TestHolderKnowsItsRecord(t *testing.T) {
	a, b, url := replicas(t, time.Minute)
	ctx := t.Context()
	la := acquire(t, a, key)
	if _, err := a.FindThread(ctx, key.Channel, key.Thread); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindThread before any record: %v, want ErrNotFound", err)
	}
	must(t, a.PutSession(ctx, rec(`{"v":1}`)))
	exec(t, url, `UPDATE h9_sessions SET data = '{"v":"behind its back"}'`) // no h9 writes so
	if got, err := a.FindThread(ctx, key.Channel, key.Thread); err != nil || string(got.Data) != `{"v":1}` {
		t.Fatalf("the holder's FindThread = %s, %v; want what it wrote", got.Data, err)
	}
	must(t, a.ReleaseLease(ctx, la))
	if got, err := a.FindThread(ctx, key.Channel, key.Thread); err != nil || string(got.Data) != `{"v":"behind its back"}` {
		t.Fatalf("FindThread after the release = %s, %v; want the database's record", got.Data, err)
	}
	acquire(t, b, key) // b's acquisition reads the record it finds
	if got, err := b.FindThread(ctx, key.Channel, key.Thread); err != nil || string(got.Data) != `{"v":"behind its back"}` {
		t.Fatalf("the new holder's FindThread = %s, %v", got.Data, err)
	}
	bad := rec(`{"v":2}`)
	bad.Meta.ID = "another session"
	if err := b.PutSession(ctx, bad); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second session in the thread: %v, want ErrConflict", err)
	}
	exec(t, url, `UPDATE h9_sessions SET data = '{"v":3}'`)
	if got, err := b.FindThread(ctx, key.Channel, key.Thread); err != nil || string(got.Data) != `{"v":3}` {
		t.Fatalf("FindThread after a failed write = %s, %v; want a fresh read", got.Data, err)
	}
}

// Items posted before a replica takes the thread are taken by its first
// TakeInbox (the acquisition's read), later ones by the next.
func TestNewHolderTakesWhatWaited(t *testing.T) {
	a, b, _ := replicas(t, time.Minute)
	ctx := t.Context()
	must(t, b.PostInbox(ctx, key, []byte("one")))
	acquire(t, a, key)
	if got, err := a.TakeInbox(ctx, key); err != nil || !slices.Equal(str(got), []string{"one"}) {
		t.Fatalf("first take = %q, %v; want [one]", got, err)
	}
	must(t, b.PostInbox(ctx, key, []byte("two")))
	if got, err := a.TakeInbox(ctx, key); err != nil || !slices.Equal(str(got), []string{"two"}) {
		t.Fatalf("second take = %q, %v; want [two]", got, err)
	}
}

func str(items [][]byte) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it)
	}
	return out
}

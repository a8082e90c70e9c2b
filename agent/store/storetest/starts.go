package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// startCases: what the bot relies on to finish a new session's start
// that a stopped process left between its command and its first commit.
var startCases = []testCase{
	{"StartsKeptUntilForgotten", testStarts},
	{"StartsRefuseWhatCannotBeOne", testStartsInvalid},
}

// testStarts: starts are kept by ID with their data exactly, listed
// oldest first, across a reopen; putting one again replaces it; deleting
// one leaves the others, and deleting one already gone is no error.
func testStarts(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	t0 := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	second := store.Start{ID: "s2", Channel: "C2", At: t0.Add(time.Second), Data: json.RawMessage(`{"task":"b"}`)}
	first := store.Start{ID: "s1", Channel: "C1", At: t0, Data: json.RawMessage(`{"task":"a, then \"Ñ\""}`)}
	must(t, b.PutStart(ctx, second))
	must(t, b.PutStart(ctx, first))
	must(t, b.PutStart(ctx, first)) // a retry of the same put
	b = reopen(t)
	got, err := b.Starts(ctx)
	must(t, err)
	if len(got) != 2 || !sameStart(got[0], first) || !sameStart(got[1], second) {
		t.Fatalf("starts after a reopen = %+v, want s1 then s2 exactly", got)
	}
	must(t, b.DeleteStart(ctx, "s1"))
	must(t, b.DeleteStart(ctx, "s1"))
	must(t, b.DeleteStart(ctx, "never"))
	if got, err := b.Starts(ctx); err != nil || len(got) != 1 || got[0].ID != "s2" {
		t.Errorf("after forgetting s1: %+v, %v; want only s2", got, err)
	}
}

func testStartsInvalid(t *testing.T, fresh Fresh) {
	b, _ := fresh(t)
	ctx := t.Context()
	for _, st := range []store.Start{
		{Channel: "C1", At: time.Now(), Data: json.RawMessage(`{}`)},
		{ID: "s1", At: time.Now(), Data: json.RawMessage(`{}`)},
		{ID: "s1", Channel: "C1", At: time.Now(), Data: json.RawMessage(`{not json`)},
	} {
		if err := b.PutStart(ctx, st); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutStart(%+v) = %v, want store.ErrInvalid", st, err)
		}
	}
	if got, err := b.Starts(ctx); err != nil || len(got) != 0 {
		t.Errorf("refused starts were kept: %+v, %v", got, err)
	}
}

func sameStart(a, b store.Start) bool {
	return a.ID == b.ID && a.Channel == b.Channel && a.At.Equal(b.At) && sameJSON(a.Data, b.Data)
}

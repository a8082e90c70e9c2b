package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// sessionCases: what the bot relies on for its session records.
var sessionCases = []testCase{
	{"SessionRoundTrip", testSessionRoundTrip},
	{"SessionMissingThreadIsNotFound", testMissingThread},
	{"SessionPutReplaces", testSessionPutReplaces},
	{"SessionThreadHasOneSession", testThreadHasOneSession},
	{"SessionInvalidRecordsRefused", testInvalidRecords},
	{"SessionListChannelInThreadOrderWithoutPrefixMatches", testListChannel},
	{"SessionListOwnerMostRecentFirstAndLimited", testListOwner},
	{"SessionActiveIndexFollowsRecords", testActiveIndex},
	{"SessionRecordsSurviveReopen", testSessionsSurviveReopen},
}

// record is a test session record in channel, thread, owned by owner.
func record(team, channel, thread, owner string, updated time.Duration) store.SessionRecord {
	id := team + "/" + channel + "/" + thread
	data, _ := json.Marshal(map[string]any{"task": "task of " + id, "revision": 1})
	return store.SessionRecord{
		Meta: store.SessionMeta{ID: id, Team: team, Channel: channel, Thread: thread, Owner: owner, Updated: at(updated)},
		Data: data,
	}
}

func wantRecord(t *testing.T, got, want store.SessionRecord) {
	t.Helper()
	g, w := got.Meta, want.Meta
	if !g.Updated.Equal(w.Updated) {
		t.Errorf("updated = %v, want %v", g.Updated, w.Updated)
	}
	g.Updated, w.Updated = time.Time{}, time.Time{}
	if g != w {
		t.Errorf("meta = %+v, want %+v", got.Meta, want.Meta)
	}
	if !sameJSON(got.Data, want.Data) {
		t.Errorf("data = %s, want %s", got.Data, want.Data)
	}
}

func ids(recs []store.SessionRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Meta.ID
	}
	return out
}

func testSessionRoundTrip(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	rec := record("T1", "C1", "1700000000.000100", "U1", 0)
	rec.Meta.Active = true
	must(t, b.PutSession(ctx, rec))
	got, err := b.FindThread(ctx, "C1", "1700000000.000100")
	must(t, err)
	wantRecord(t, got, rec)
}

func testMissingThread(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	must(t, b.PutSession(ctx, record("T1", "C1", "1.1", "U1", 0)))
	for _, where := range [][2]string{{"C1", "1.2"}, {"C2", "1.1"}, {"C", "1.1"}, {"C1", "1"}} {
		if _, err := b.FindThread(ctx, where[0], where[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FindThread(%s, %s) = %v, want ErrNotFound", where[0], where[1], err)
		}
	}
}

func testSessionPutReplaces(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	rec := record("T1", "C1", "1.1", "U1", 0)
	must(t, b.PutSession(ctx, rec))
	rec.Data = json.RawMessage(`{"task":"changed","revision":2}`)
	rec.Meta.Updated = at(time.Minute)
	must(t, b.PutSession(ctx, rec))
	got, err := b.FindThread(ctx, "C1", "1.1")
	must(t, err)
	wantRecord(t, got, rec)
	if all, err := b.ListChannel(ctx, "C1"); err != nil || len(all) != 1 {
		t.Errorf("channel lists %d records (%v) after a second put, want 1", len(all), err)
	}
}

// A thread is one session: a second id for the same thread is refused and
// the first record stays as it was.
func testThreadHasOneSession(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	first := record("T1", "C1", "1.1", "U1", 0)
	must(t, b.PutSession(ctx, first))
	if err := b.PutSession(ctx, record("", "C1", "1.1", "U2", time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second session for a thread: err = %v, want ErrConflict", err)
	}
	got, err := b.FindThread(ctx, "C1", "1.1")
	must(t, err)
	wantRecord(t, got, first)
	if owned, err := b.ListOwner(ctx, "U2", 0); err != nil || len(owned) != 0 {
		t.Errorf("the refused record is listed for its owner: %v, %v", ids(owned), err)
	}
}

func testInvalidRecords(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	bad := map[string]func(*store.SessionRecord){
		"no id":        func(r *store.SessionRecord) { r.Meta.ID = "" },
		"no channel":   func(r *store.SessionRecord) { r.Meta.Channel = "" },
		"no thread":    func(r *store.SessionRecord) { r.Meta.Thread = "" },
		"data no json": func(r *store.SessionRecord) { r.Data = json.RawMessage("{") },
	}
	for name, spoil := range bad {
		rec := record("T1", "C1", "1.1", "U1", 0)
		spoil(&rec)
		if err := b.PutSession(ctx, rec); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if all, err := b.ListChannel(ctx, "C1"); err != nil || len(all) != 0 {
		t.Errorf("refused records were stored: %v, %v", ids(all), err)
	}
}

// A channel lists its own sessions whatever their team, oldest thread
// first, and never another channel's whose id starts the same (C1, C10).
func testListChannel(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	puts := []store.SessionRecord{
		record("T1", "C1", "1700000002.000000", "U1", 3*time.Minute),
		record("T1", "C10", "1700000001.000000", "U1", 0),
		record("", "C1", "1700000001.000000", "U2", time.Minute), // made while the team was unknown
		record("T1", "C1", "1700000003.000000", "U1", 2*time.Minute),
		record("T1", "C", "1700000001.000000", "U1", 0),
	}
	for _, r := range puts {
		must(t, b.PutSession(ctx, r))
	}
	for channel, want := range map[string][]string{
		"C1":  {"/C1/1700000001.000000", "T1/C1/1700000002.000000", "T1/C1/1700000003.000000"},
		"C10": {"T1/C10/1700000001.000000"},
		"C":   {"T1/C/1700000001.000000"},
		"C2":  nil,
	} {
		got, err := b.ListChannel(ctx, channel)
		must(t, err)
		if !slices.Equal(ids(got), want) {
			t.Errorf("ListChannel(%s) = %v, want %v", channel, ids(got), want)
		}
	}
}

func testListOwner(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	for i := range 5 {
		must(t, b.PutSession(ctx, record("T1", fmt.Sprint("C", i%2), fmt.Sprint("1.", i), "U1", time.Duration(i*7%5)*time.Minute)))
	}
	must(t, b.PutSession(ctx, record("T1", "C1", "2.0", "U10", 9*time.Minute)))
	got, err := b.ListOwner(ctx, "U1", 0)
	must(t, err)
	// Updated: 1.0 → 0, 1.1 → 2, 1.2 → 4, 1.3 → 1, 1.4 → 3 minutes.
	want := []string{"T1/C0/1.2", "T1/C0/1.4", "T1/C1/1.1", "T1/C1/1.3", "T1/C0/1.0"}
	if !slices.Equal(ids(got), want) {
		t.Errorf("ListOwner(U1) = %v, want %v", ids(got), want)
	}
	got, err = b.ListOwner(ctx, "U1", 2)
	must(t, err)
	if !slices.Equal(ids(got), want[:2]) {
		t.Errorf("ListOwner(U1, 2) = %v, want %v", ids(got), want[:2])
	}
	if got, err := b.ListOwner(ctx, "U", 0); err != nil || len(got) != 0 {
		t.Errorf("ListOwner(U) = %v, %v; want none (U1 and U10 are others)", ids(got), err)
	}
}

func testActiveIndex(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	recs := []store.SessionRecord{record("T1", "C1", "1.1", "U1", 0), record("T1", "C1", "1.2", "U1", 0), record("T1", "C2", "1.3", "U1", 0)}
	for _, r := range recs {
		r.Meta.Active = true
		must(t, b.PutSession(ctx, r))
	}
	recs[1].Meta.Active = false
	must(t, b.PutSession(ctx, recs[1]))
	active, err := b.ListActive(ctx)
	must(t, err)
	var got []string
	for _, m := range active {
		got = append(got, m.ID)
		if m.Channel == "" || m.Thread == "" || !m.Active {
			t.Errorf("active meta lacks its fields: %+v", m)
		}
	}
	slices.Sort(got)
	if want := []string{"T1/C1/1.1", "T1/C2/1.3"}; !slices.Equal(got, want) {
		t.Errorf("ListActive = %v, want %v", got, want)
	}
}

func testSessionsSurviveReopen(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	rec := record("T1", "C1", "1.1", "U1", 0)
	rec.Meta.Active = true
	must(t, b.PutSession(ctx, rec))
	b = reopen(t)
	got, err := b.FindThread(ctx, "C1", "1.1")
	must(t, err)
	wantRecord(t, got, rec)
	if active, err := b.ListActive(ctx); err != nil || len(active) != 1 {
		t.Errorf("ListActive after reopen = %v, %v", active, err)
	}
}

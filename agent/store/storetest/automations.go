package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// automationCases: what automations rely on to start each occurrence once
// across restarts, redeliveries and a fleet (ARCHITECTURE.md, "Automations"
// in the contract; "Storage: one seam, two backends").
var automationCases = []testCase{
	{"OccurrenceRecordedOnce", testOccurrenceRecordedOnce},
	{"OccurrenceRecordRaceHasOneWinner", testOccurrenceRace},
	{"OccurrenceUpdateIsCompareAndSwap", testOccurrenceUpdate},
	{"OccurrencesLeftBehindAreClaimedOnce", testOccurrenceClaim},
	{"OccurrencesListedByState", testOccurrencesListed},
	{"OccurrencesPrunedWhenSettled", testOccurrencesPruned},
	{"OccurrencePrunedIsRecordedAnew", testOccurrencePrunedAnew},
	{"OccurrencesRefuseWhatCannotBeOne", testOccurrencesInvalid},
	{"AutomationStateIsCompareAndSwap", testAutomationState},
	{"AutomationSpendAddsUpPerDay", testAutomationSpend},
}

func occurrence(automation, key string, recorded time.Duration) store.Occurrence {
	return store.Occurrence{Automation: automation, Key: key, State: store.OccurrenceRecorded,
		Data: json.RawMessage(`{"task":"bump deps"}`), Recorded: at(recorded), Owner: "r1", Claimed: at(recorded)}
}

// testOccurrenceRecordedOnce: the first record of a key wins and is kept
// exactly across a reopen; a second record of the key (a redelivery, a
// replay, another replica) gets the stored one back.
func testOccurrenceRecordedOnce(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	first := occurrence("nightly", "schedule:2026-11-30T12:00", 0)
	first.Dedupe = "deps"
	got, inserted, err := b.RecordOccurrence(ctx, first)
	must(t, err)
	if !inserted || got.Version != 1 {
		t.Fatalf("first record: inserted %v, version %d; want true, 1", inserted, got.Version)
	}
	again := occurrence("nightly", "schedule:2026-11-30T12:00", time.Minute)
	again.Owner = "r2"
	got, inserted, err = b.RecordOccurrence(ctx, again)
	must(t, err)
	if inserted || got.Owner != "r1" || !got.Recorded.Equal(first.Recorded) || got.Dedupe != "deps" {
		t.Fatalf("second record of the key: inserted %v, got %+v; want the first kept", inserted, got)
	}
	_, inserted, err = b.RecordOccurrence(ctx, occurrence("nightly/other", "schedule:2026-11-30T12:00", 0))
	must(t, err)
	if !inserted {
		t.Error("the same key of another automation was refused")
	}
	b = reopen(t)
	got, err = b.Occurrence(ctx, "nightly", "schedule:2026-11-30T12:00")
	must(t, err)
	first.Version = 1
	if !sameOccurrence(got, first) {
		t.Errorf("after a reopen: %+v, want %+v", got, first)
	}
	if _, err := b.Occurrence(ctx, "nightly", "never"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown occurrence: %v, want ErrNotFound", err)
	}
}

// testOccurrenceRace: replicas recording one key at once: exactly one wins.
func testOccurrenceRace(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	const racers, keys = 8, 5
	var wins [keys]atomic.Int32
	var wg sync.WaitGroup
	for r := range racers {
		wg.Go(func() {
			for k := range keys {
				o := occurrence("hook", fmt.Sprint("webhook:", k), 0)
				o.Owner = fmt.Sprint("r", r)
				_, inserted, err := b.RecordOccurrence(ctx, o)
				if err != nil {
					t.Error(err)
					return
				}
				if inserted {
					wins[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range keys {
		if n := wins[k].Load(); n != 1 {
			t.Errorf("key %d: %d winners, want 1", k, n)
		}
	}
}

// testOccurrenceUpdate: an update carries the version it read; a stale
// one is refused and changes nothing.
func testOccurrenceUpdate(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	o, _, err := b.RecordOccurrence(ctx, occurrence("nightly", "k1", 0))
	must(t, err)
	started := o
	started.State, started.Channel, started.Thread = store.OccurrenceStarted, "C1", "1700000000.000100"
	got, err := b.UpdateOccurrence(ctx, started)
	must(t, err)
	if got.Version != 2 {
		t.Errorf("version after an update = %d, want 2", got.Version)
	}
	stale := o
	stale.State, stale.Cause = store.OccurrenceFailed, "channel not joined"
	if _, err := b.UpdateOccurrence(ctx, stale); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a stale update: %v, want ErrConflict", err)
	}
	missing := occurrence("nightly", "never", 0)
	missing.Version = 1
	if _, err := b.UpdateOccurrence(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an update of nothing: %v, want ErrNotFound", err)
	}
	b = reopen(t)
	o, err = b.Occurrence(ctx, "nightly", "k1")
	must(t, err)
	if o.State != store.OccurrenceStarted || o.Thread != "1700000000.000100" || o.Cause != "" || o.Version != 2 {
		t.Errorf("stored after a refused stale update: %+v", o)
	}
	// Back to recorded (a dedupe key whose session closed fires anew).
	o.State, o.Thread, o.Channel = store.OccurrenceRecorded, "", ""
	_, err = b.UpdateOccurrence(ctx, o)
	must(t, err)
	if left, err := b.Occurrences(ctx, "nightly", store.OccurrenceRecorded, 0); err != nil || len(left) != 1 {
		t.Errorf("pending after going back to recorded: %+v, %v", left, err)
	}
}

// testOccurrenceClaim: what a stopped replica left recorded is taken on
// by exactly one sweeper once its claim is old, and by none before.
func testOccurrenceClaim(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	for i := range 6 {
		_, _, err := b.RecordOccurrence(ctx, occurrence(fmt.Sprint("a", i%2), fmt.Sprint("k", i), time.Duration(i)*time.Second))
		must(t, err)
	}
	done, _, err := b.RecordOccurrence(ctx, occurrence("a0", "done", 0))
	must(t, err)
	done.State = store.OccurrenceStarted
	_, err = b.UpdateOccurrence(ctx, done)
	must(t, err)
	queued := occurrence("a1", "queued", 0)
	queued.State = store.OccurrenceQueued
	_, _, err = b.RecordOccurrence(ctx, queued)
	must(t, err)
	b = reopen(t)
	if got, err := b.ClaimOccurrences(ctx, store.OccurrenceRecorded, at(0), "r2", at(time.Hour), 0); err != nil || len(got) != 0 {
		t.Fatalf("claim before any is old: %+v, %v", got, err)
	}
	// Two sweepers at once: each occurrence to exactly one of them.
	var mu sync.Mutex
	taken := map[string]string{}
	var wg sync.WaitGroup
	for _, r := range []string{"r2", "r3"} {
		wg.Go(func() {
			got, err := b.ClaimOccurrences(ctx, store.OccurrenceRecorded, at(10*time.Second), r, at(time.Hour), 0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, o := range got {
				if prev, ok := taken[o.Key]; ok {
					t.Errorf("%s taken by %s and %s", o.Key, prev, r)
				}
				if o.Owner != r || !o.Claimed.Equal(at(time.Hour)) || o.Version != 2 {
					t.Errorf("claimed %+v: want owner %s at %v, version 2", o, r, at(time.Hour))
				}
				taken[o.Key] = r
			}
		})
	}
	wg.Wait()
	if len(taken) != 6 {
		t.Errorf("claimed %v, want k0…k5 (not the started or the queued one)", taken)
	}
	if got, err := b.ClaimOccurrences(ctx, store.OccurrenceRecorded, at(10*time.Second), "r4", at(2*time.Hour), 0); err != nil || len(got) != 0 {
		t.Errorf("claimed again within the window: %+v, %v", got, err)
	}
	got, err := b.ClaimOccurrences(ctx, store.OccurrenceRecorded, at(90*time.Minute), "r4", at(2*time.Hour), 2)
	must(t, err)
	if len(got) != 2 {
		t.Errorf("a claim limited to 2 took %d", len(got))
	}
	q, err := b.ClaimOccurrences(ctx, store.OccurrenceQueued, at(time.Minute), "r4", at(2*time.Hour), 0)
	must(t, err)
	if len(q) != 1 || q[0].Key != "queued" {
		t.Errorf("claimed queued: %+v", q)
	}
}

func testOccurrencesListed(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	for i, key := range []string{"q3", "q1", "q2"} {
		o := occurrence("deploys", key, time.Duration(3-i)*time.Minute)
		o.State = store.OccurrenceQueued
		_, _, err := b.RecordOccurrence(ctx, o)
		must(t, err)
	}
	_, _, err := b.RecordOccurrence(ctx, occurrence("deploys", "r1", 0))
	must(t, err)
	other := occurrence("deploys-2", "q9", 0)
	other.State = store.OccurrenceQueued
	_, _, err = b.RecordOccurrence(ctx, other)
	must(t, err)
	got, err := b.Occurrences(ctx, "deploys", store.OccurrenceQueued, 0)
	must(t, err)
	var keys []string
	for _, o := range got {
		keys = append(keys, o.Key)
	}
	if fmt.Sprint(keys) != "[q2 q1 q3]" {
		t.Errorf("queued of deploys = %v, want [q2 q1 q3] (oldest recorded first, not deploys-2's)", keys)
	}
	if got, err := b.Occurrences(ctx, "deploys", store.OccurrenceQueued, 1); err != nil || len(got) != 1 || got[0].Key != "q2" {
		t.Errorf("the oldest queued: %+v, %v", got, err)
	}
	if _, err := b.Occurrences(ctx, "deploys", store.OccurrenceStarted, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("listing started occurrences: %v, want ErrInvalid (only pending ones are listed)", err)
	}
}

// testOccurrencesPruned: pruning lists the settled occurrences recorded
// in a window, oldest first and without their data, and forgets only
// those still as listed: never a pending one (recorded or queued), never
// one a writer changed since (a repeat that took it anew).
func testOccurrencesPruned(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	states := []store.OccurrenceState{store.OccurrenceStarted, store.OccurrenceFailed, store.OccurrenceRecorded,
		store.OccurrenceQueued, store.OccurrenceSkipped, store.OccurrenceDeduplicated, store.OccurrenceStarted}
	for i, st := range states {
		o := occurrence("a", fmt.Sprint("old", i), time.Duration(i)*time.Minute)
		o.State, o.Dedupe = st, fmt.Sprint("d", i)
		if st == store.OccurrenceStarted {
			o.Channel, o.Thread = "C1", fmt.Sprint("1700000000.00000", i)
		}
		_, _, err := b.RecordOccurrence(ctx, o)
		must(t, err)
	}
	newer := occurrence("b", "new", 48*time.Hour)
	newer.State = store.OccurrenceDeduplicated
	_, _, err := b.RecordOccurrence(ctx, newer)
	must(t, err)
	b = reopen(t)

	listed, err := b.SettledOccurrences(ctx, time.Time{}, at(time.Hour), 0)
	must(t, err)
	if got := keysOf(listed); got != "[old0 old1 old4 old5 old6]" {
		t.Fatalf("settled before an hour: %s, want [old0 old1 old4 old5 old6] (oldest first, none pending, not the newer)", got)
	}
	for _, o := range listed {
		if o.Data != nil || o.Version != 1 || o.Automation != "a" || o.Dedupe == "" || (o.State == store.OccurrenceStarted) != (o.Thread != "") {
			t.Errorf("listed %+v: want its record (thread, dedupe, version) without data", o)
		}
	}
	if got, err := b.SettledOccurrences(ctx, at(2*time.Minute), at(time.Hour), 2); err != nil || keysOf(got) != "[old4 old5]" {
		t.Errorf("from 2 minutes, at most 2: %s, %v; want [old4 old5]", keysOf(got), err)
	}

	// old0's key repeats before the prune (its session closed, it fires
	// anew): that write wins over a forget of what was listed.
	again, err := b.Occurrence(ctx, "a", "old0")
	must(t, err)
	again.State, again.Thread, again.Channel = store.OccurrenceRecorded, "", ""
	_, err = b.UpdateOccurrence(ctx, again)
	must(t, err)
	// A pending occurrence passed as it is stored is kept too.
	pending, err := b.Occurrence(ctx, "a", "old2")
	must(t, err)
	n, err := b.ForgetOccurrences(ctx, append(listed, pending))
	must(t, err)
	if n != 4 {
		t.Errorf("forgot %d, want 4 (old1, old4, old5, old6)", n)
	}
	if n, err := b.ForgetOccurrences(ctx, listed); err != nil || n != 0 {
		t.Errorf("forgetting the forgotten again: %d, %v; want 0", n, err)
	}
	b = reopen(t)
	for key, kept := range map[string]bool{"old0": true, "old1": false, "old2": true, "old3": true, "old4": false, "old5": false, "old6": false} {
		_, err := b.Occurrence(ctx, "a", key)
		if kept != (err == nil) || (!kept && !errors.Is(err, store.ErrNotFound)) {
			t.Errorf("%s: kept %v (err %v), want kept %v", key, err == nil, err, kept)
		}
	}
	if _, err := b.Occurrence(ctx, "b", "new"); err != nil {
		t.Errorf("the newer one: %v", err)
	}
	if got, err := b.SettledOccurrences(ctx, time.Time{}, at(72*time.Hour), 0); err != nil || keysOf(got) != "[new]" {
		t.Errorf("settled after the prune: %s, %v; want [new]", keysOf(got), err)
	}
	for st, want := range map[store.OccurrenceState]string{store.OccurrenceRecorded: "[old0 old2]", store.OccurrenceQueued: "[old3]"} {
		if got, err := b.Occurrences(ctx, "a", st, 0); err != nil || keysOf(got) != want {
			t.Errorf("%s after the prune: %s, %v; want %s", st, keysOf(got), err, want)
		}
	}
}

// testOccurrencePrunedAnew: a pruned key is a new key: the next record
// of it is inserted (Version 1), indexed by its new time.
func testOccurrencePrunedAnew(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	o := occurrence("a", "k", 0)
	o.State = store.OccurrenceSkipped
	_, _, err := b.RecordOccurrence(ctx, o)
	must(t, err)
	listed, err := b.SettledOccurrences(ctx, time.Time{}, at(time.Hour), 0)
	must(t, err)
	if n, err := b.ForgetOccurrences(ctx, listed); err != nil || n != 1 {
		t.Fatalf("forgot %d, %v; want 1", n, err)
	}
	got, inserted, err := b.RecordOccurrence(ctx, occurrence("a", "k", 2*time.Hour))
	must(t, err)
	if !inserted || got.Version != 1 {
		t.Errorf("recorded after its prune: inserted %v, version %d; want true, 1", inserted, got.Version)
	}
	if got, err := b.SettledOccurrences(ctx, time.Time{}, at(3*time.Hour), 0); err != nil || len(got) != 0 {
		t.Errorf("settled: %s, %v; want none (the new record is pending)", keysOf(got), err)
	}
	if got, err := b.ClaimOccurrences(ctx, store.OccurrenceRecorded, at(3*time.Hour), "r2", at(4*time.Hour), 0); err != nil || keysOf(got) != "[k]" {
		t.Errorf("claimed: %s, %v; want [k]", keysOf(got), err)
	}
}

func keysOf(os []store.Occurrence) string {
	keys := make([]string, len(os))
	for i, o := range os {
		keys[i] = o.Key
	}
	return fmt.Sprint(keys)
}

func testOccurrencesInvalid(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	long := make([]byte, store.MaxOccurrenceKey+1)
	for i := range long {
		long[i] = 'k'
	}
	for _, o := range []store.Occurrence{
		{Key: "k", State: store.OccurrenceRecorded},
		{Automation: "a", State: store.OccurrenceRecorded},
		{Automation: "a", Key: "k", State: "exploded"},
		{Automation: "a", Key: "k\x00", State: store.OccurrenceRecorded},
		{Automation: "a", Key: string(long), State: store.OccurrenceRecorded},
		{Automation: "a", Key: "k", State: store.OccurrenceRecorded, Data: json.RawMessage(`{nope`)},
	} {
		if _, _, err := b.RecordOccurrence(ctx, o); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("RecordOccurrence(%.60q) = %v, want ErrInvalid", fmt.Sprintf("%+v", o), err)
		}
	}
	if _, err := b.PutAutomationState(ctx, store.AutomationState{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a state without a name: %v, want ErrInvalid", err)
	}
	if _, err := b.PutAutomationState(ctx, store.AutomationState{Name: "a", Cursor: json.RawMessage(`[`)}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a state with a broken cursor: %v, want ErrInvalid", err)
	}
}

// testAutomationState: a state is created once, then written only by who
// read its current version; everything in it survives a reopen.
func testAutomationState(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	if _, err := b.AutomationState(ctx, "nightly"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a state never written: %v, want ErrNotFound", err)
	}
	st := store.AutomationState{Name: "nightly", FirstLoaded: at(0), LastFired: at(time.Hour)}
	created, err := b.PutAutomationState(ctx, st)
	must(t, err)
	if created.Version != 1 {
		t.Errorf("created at version %d, want 1", created.Version)
	}
	if _, err := b.PutAutomationState(ctx, st); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second create: %v, want ErrConflict", err)
	}
	full := created
	full.Paused, full.PausedBy, full.PausedAt = true, "h9", at(2*time.Hour)
	full.Failures, full.LastCause = 3, "the channel is not joined"
	full.LastKey, full.LastChannel, full.LastThread, full.Starts = "schedule:x", "C1", "1.5", 7
	full.Cursor = json.RawMessage(`{"etags":{"issues":"W/\"a\""}}`)
	full.Day, full.Spent = "2026-11-30", 1200
	written, err := b.PutAutomationState(ctx, full)
	must(t, err)
	if _, err := b.PutAutomationState(ctx, created); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a write of a stale version: %v, want ErrConflict", err)
	}
	_, err = b.PutAutomationState(ctx, store.AutomationState{Name: "a-first", FirstLoaded: at(0)})
	must(t, err)
	b = reopen(t)
	got, err := b.AutomationState(ctx, "nightly")
	must(t, err)
	if !sameState(got, written) {
		t.Errorf("after a reopen: %+v, want %+v", got, written)
	}
	all, err := b.AutomationStates(ctx)
	must(t, err)
	if len(all) != 2 || all[0].Name != "a-first" || all[1].Name != "nightly" {
		t.Errorf("listing: %+v, want a-first then nightly", all)
	}
}

// testAutomationSpend: spends add up within a day, concurrently, start
// again on a new day, and count as a write (a stale state is refused).
func testAutomationSpend(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	st, err := b.PutAutomationState(ctx, store.AutomationState{Name: "nightly", FirstLoaded: at(0)})
	must(t, err)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := b.AddAutomationSpend(ctx, "nightly", "2026-11-30", 100); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := b.AutomationState(ctx, "nightly")
	must(t, err)
	if got.Day != "2026-11-30" || got.Spent != 1000 || !got.FirstLoaded.Equal(at(0)) {
		t.Errorf("after ten adds of 100: %+v", got)
	}
	if _, err := b.PutAutomationState(ctx, st); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a state read before the spends was written over them: %v", err)
	}
	spent, err := b.AddAutomationSpend(ctx, "nightly", "2026-12-01", 7)
	must(t, err)
	if spent != 7 {
		t.Errorf("the next day's spend = %d, want 7", spent)
	}
	if spent, err := b.AddAutomationSpend(ctx, "new-one", "2026-12-01", 5); err != nil || spent != 5 {
		t.Errorf("a spend of an automation without a state: %d, %v", spent, err)
	}
}

func sameOccurrence(a, b store.Occurrence) bool {
	return a.Automation == b.Automation && a.Key == b.Key && a.State == b.State && a.Dedupe == b.Dedupe &&
		a.Channel == b.Channel && a.Thread == b.Thread && a.Cause == b.Cause && sameJSON(a.Data, b.Data) &&
		a.Recorded.Equal(b.Recorded) && a.Owner == b.Owner && a.Claimed.Equal(b.Claimed) && a.Version == b.Version
}

func sameState(a, b store.AutomationState) bool {
	return a.Name == b.Name && a.Version == b.Version && a.FirstLoaded.Equal(b.FirstLoaded) && a.Paused == b.Paused &&
		a.PausedBy == b.PausedBy && a.PausedAt.Equal(b.PausedAt) && a.Failures == b.Failures && a.LastCause == b.LastCause &&
		a.LastFired.Equal(b.LastFired) && a.LastKey == b.LastKey && a.LastChannel == b.LastChannel &&
		a.LastThread == b.LastThread && a.Starts == b.Starts && sameJSON(a.Cursor, b.Cursor) && a.Day == b.Day && a.Spent == b.Spent
}

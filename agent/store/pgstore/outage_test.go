package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgtest"
)

// outageWait bounds a store call in these tests: long enough for a
// restart of the server on a loaded machine.
const outageWait = 90 * time.Second

// A sub-second restart of the server closes every pooled connection
// (57P01 admin_shutdown on the idle ones): the step commit of a run in
// flight is sent again on a fresh connection, and the history is whole.
func TestStepCommitRidesOutARestart(t *testing.T) {
	srv := pgtest.Own(t)
	s := open(t, srv.Database(t), Options{Replica: "a", LeaseTTL: time.Minute})
	acquire(t, s, key)
	if err := s.PutSession(t.Context(), rec(`{}`)); err != nil {
		t.Fatal(err)
	}
	id := rec(`{}`).Meta.ID
	ctx, cancel := context.WithTimeout(t.Context(), outageWait)
	defer cancel()
	for i, m := range []string{"one", "two", "three"} {
		if err := s.AppendStep(ctx, id, store.Step{First: i, Messages: msg(m)}); err != nil {
			t.Fatalf("step %d (before the restart %t): %v", i, i == 0, err)
		}
		if i == 0 {
			if err := srv.Restart(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.LoadSession(ctx, id)
	if err != nil || len(got.Messages) != 3 {
		t.Fatalf("after the restart: %d messages, %v; want 3", len(got.Messages), err)
	}
	if err := s.PutSession(ctx, rec(`{"after":1}`)); err != nil {
		t.Fatalf("a fenced save after the restart: %v", err)
	}
}

// A step whose commit succeeded but whose acknowledgement was lost is
// recognised when sent again: the retry finds its own messages at the end
// of the history rather than a conflict.
func TestStepSentAgainAfterItCommittedIsRecognised(t *testing.T) {
	s := open(t, pgtest.New(t), Options{Replica: "a", LeaseTTL: time.Minute})
	acquire(t, s, key)
	if err := s.PutSession(t.Context(), rec(`{}`)); err != nil {
		t.Fatal(err)
	}
	id := rec(`{}`).Meta.ID
	step := store.Step{First: 0, Messages: msg("one")}
	if err := s.AppendStep(t.Context(), id, step); err != nil {
		t.Fatal(err)
	}
	err := s.retry(t.Context(), true, func(ctx context.Context, q pooled, _ attempt) error {
		_, err := q.Exec(ctx, "SELECT h9_fenced_step($1, $2, $3, $4, $5, $6, $7, $8, $9)",
			key.Channel, key.Thread, "a", s.holds.all()[0].Token, id, step.First, bodies(step.Messages), nil, nil)
		if isCode(err, codeStepConflict) && stepCommitted(ctx, q, id, step.First, bodies(step.Messages)) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("the same step again: %v; want it recognised as committed", err)
	}
	other := store.Step{First: 0, Messages: msg("other")}
	if err := s.AppendStep(t.Context(), id, other); err == nil {
		t.Fatal("a different step at a taken history length was accepted")
	}
}

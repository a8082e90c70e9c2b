package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func openBolt(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func put(k string) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put([]byte(k), []byte(k))
	}
}

func keys(t *testing.T, db *bolt.DB) int {
	t.Helper()
	n := 0
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("b")); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n
}

func TestConcurrentWritersAllCommit(t *testing.T) {
	db := openBolt(t)
	g := &group{db: db}
	var wg sync.WaitGroup
	for i := range 500 {
		wg.Go(func() {
			if err := g.update(put(fmt.Sprint(i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := keys(t, db); n != 500 {
		t.Errorf("%d keys, want 500", n)
	}
}

func TestFailureReachesOnlyItsCaller(t *testing.T) {
	db := openBolt(t)
	g := &group{db: db}
	bad := errors.New("bad")
	var wg sync.WaitGroup
	var failed sync.Map
	for i := range 200 {
		wg.Go(func() {
			fn := put(fmt.Sprint(i))
			if i%10 == 0 {
				fn = func(tx *bolt.Tx) error {
					_ = put("bad" + fmt.Sprint(i))(tx)
					return bad
				}
			}
			if i%50 == 1 {
				fn = func(*bolt.Tx) error { panic("boom") }
			}
			if err := g.update(fn); err != nil {
				failed.Store(i, err)
			}
		})
	}
	wg.Wait()
	n := 0
	failed.Range(func(k, v any) bool {
		n++
		i := k.(int)
		if err := v.(error); (i%10 == 0 && !errors.Is(err, bad)) || (i%50 == 1 && !errors.Is(err, errPanic)) {
			t.Errorf("call %d: %v", i, err)
		}
		return true
	})
	if n != 24 {
		t.Errorf("%d calls failed, want 24", n)
	}
	if got := keys(t, db); got != 176 {
		t.Errorf("%d keys, want 176 (no write of a failed call)", got)
	}
}

func TestLoneWriter(t *testing.T) {
	db := openBolt(t)
	g := &group{db: db}
	for i := range 3 {
		if err := g.update(put(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := keys(t, db); n != 3 {
		t.Errorf("%d keys", n)
	}
}

// A writer that refuses before writing (a lost compare-and-swap) gets its
// own error, the store's sentinel intact, and the batch's other writers
// commit in the same transaction instead of one commit each.
func TestRefusalFailsOnlyItsCaller(t *testing.T) {
	db := openBolt(t)
	g := &group{db: db}
	var calls []*call
	for i := range 5 {
		fn := put(fmt.Sprint(i))
		if i == 2 {
			fn = func(*bolt.Tx) error { return refuse(fmt.Errorf("%w: lost", errConflictForTest)) }
		}
		calls = append(calls, &call{fn: fn, done: make(chan struct{}), lead: make(chan struct{})})
	}
	txid := func() (id int) {
		_ = db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	before := txid()
	g.commit(calls)
	if got := txid() - before; got != 1 {
		t.Errorf("%d write transactions for one batch with a refusal, want 1", got)
	}
	for i, c := range calls {
		<-c.done
		if (c.err != nil) != (i == 2) || (i == 2 && !errors.Is(c.err, errConflictForTest)) {
			t.Errorf("call %d: err %v", i, c.err)
		}
		if _, ok := errors.AsType[refusal](c.err); ok {
			t.Errorf("call %d: the refusal's wrapper reached the caller", i)
		}
	}
	if n := keys(t, db); n != 4 {
		t.Errorf("%d keys, want 4", n)
	}
	// Alone, a refusal is its caller's error too.
	if err := g.update(func(*bolt.Tx) error { return refuse(errConflictForTest) }); err != errConflictForTest {
		t.Errorf("alone: %v", err)
	}
}

var errConflictForTest = errors.New("conflict")

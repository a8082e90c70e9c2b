package boltstore

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/store"
)

// v1Threads are the sessions in testdata/v1/h9.db (see its README).
var v1Threads = map[string]string{
	"done": "1700000000.000500", "review": "1700000000.002700", "approval": "1700000000.005100",
	"stalled": "1700000000.007900", "failed": "1700000000.012200", "autorun": "1700000000.014000",
}

var v1Tasks = map[string]string{
	"done": "fixture done", "review": "fixture review", "approval": "fixture approval",
	"stalled": "fixture stall", "failed": "fixture failure", "autorun": "fixture auto-run",
}

// copyV1 copies the schema 1 fixture into a temp dir and returns its path.
func copyV1(t *testing.T) string {
	t.Helper()
	in, err := os.Open(filepath.Join("testdata", "v1", "h9.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "h9.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file written by h9 before the storage seams opens with every session,
// todo list, conversation and dedup key where the new layout keeps them.
func TestMigrateV1(t *testing.T) {
	s, _ := openFile(t, copyV1(t))
	ctx := t.Context()
	recs, err := s.ListChannel(ctx, "C1")
	if err != nil || len(recs) != len(v1Threads) {
		t.Fatalf("channel C1 lists %d sessions (%v), want %d", len(recs), err, len(v1Threads))
	}
	for name, thread := range v1Threads {
		rec, err := s.FindThread(ctx, "C1", thread)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := rec.Meta
		if m.ID != "T1/C1/"+thread || m.Team != "T1" || m.Owner != "U1" || m.Updated.IsZero() {
			t.Errorf("%s: meta %+v", name, m)
		}
		var data struct {
			Task  string `json:"task"`
			State string `json:"state"`
		}
		if err := json.Unmarshal(rec.Data, &data); err != nil || data.Task != v1Tasks[name] || data.State == "" {
			t.Errorf("%s: data %s (%v)", name, rec.Data, err)
		}
	}
	active, err := s.ListActive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var activeIDs []string
	for _, m := range active {
		activeIDs = append(activeIDs, m.ID)
	}
	if want := []string{"T1/C1/" + v1Threads["approval"], "T1/C1/" + v1Threads["autorun"]}; !slices.Equal(activeIDs, want) {
		t.Errorf("active = %v, want %v", activeIDs, want)
	}
	checkAgentV1(t, s)
	checkDedupV1(t, s, recs[0].Meta.Updated)
}

func checkAgentV1(t *testing.T, s *Store) {
	t.Helper()
	sess, err := s.LoadSession(t.Context(), "T1/C1/"+v1Threads["autorun"])
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Total struct{ TotalTokens int } `json:"total"`
	}
	if len(sess.Messages) != 5 || len(sess.Todos) != 2 || json.Unmarshal(sess.State, &state) != nil || state.Total.TotalTokens == 0 {
		t.Errorf("auto-run session: %d messages, todos %+v, state %s", len(sess.Messages), sess.Todos, sess.State)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAgent).ForEachBucket(func(id []byte) error {
			b := tx.Bucket(bucketAgent).Bucket(id)
			if b.Get(keyUsageV1) != nil || b.Get(keyModeV1) != nil || b.Get(keyState) == nil {
				t.Errorf("agent session %s keeps schema 1 keys or lacks its state", id)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkDedupV1: the keys keep their claim times, so they expire as before.
func checkDedupV1(t *testing.T, s *Store, around time.Time) {
	t.Helper()
	keys, err := s.Claimed(t.Context(), time.Time{})
	if err != nil || !slices.Contains(keys, "ev:EvFixture1") || !slices.Contains(keys, "msg:C1/1700000999.000100") {
		t.Fatalf("claimed keys after migration = %v, %v", keys, err)
	}
	fresh, err := s.Claim(t.Context(), []string{"ev:EvFixture1", "ev:new"}, around.Add(time.Hour))
	if err != nil || !slices.Equal(fresh, []bool{false, true}) {
		t.Errorf("claims an hour after the fixture = %v, %v; want seen, new", fresh, err)
	}
	if fresh, _ := s.Claim(t.Context(), []string{"ev:EvFixture1"}, around.Add(store.DedupTTL+time.Hour)); !slices.Equal(fresh, []bool{true}) {
		t.Errorf("a schema 1 key past its TTL claims as %v, want new", fresh)
	}
}

// Opening a migrated file again changes nothing.
func TestMigrateV1IsIdempotent(t *testing.T) {
	path := copyV1(t)
	_, db := openFile(t, path)
	first := dump(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, db = openFile(t, path)
	if second := dump(t, db); !maps.EqualFunc(first, second, bytes.Equal) {
		t.Errorf("a second open changed the file: %d keys before, %d after", len(first), len(second))
	}
	if string(first["h9_meta/schema"]) != "2" {
		t.Errorf("schema = %q, want 2", first["h9_meta/schema"])
	}
}

// A file from a newer h9 is refused rather than misread.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h9.db")
	_, db := openFile(t, path)
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("3")) }); err != nil {
		t.Fatal(err)
	}
	if _, err := New(db); err == nil {
		t.Fatal("New accepted a file of schema 3")
	}
}

// dump is every key of the file, nested buckets as paths.
func dump(t *testing.T, db *bolt.DB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			out[prefix+string(k)] = slices.Clone(v)
			return nil
		})
	}
	err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name)+"/", b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

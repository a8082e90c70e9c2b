package agent

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// onPostgres moves the harness to a PostgreSQL store that syncs its
// commits (pgtest.NewDurable), written as a fleet's replica writes: each
// of the sessions ids under the lease of its own thread, every write
// fenced by it.
func (h *harness) onPostgres(b *testing.B, ids ...string) {
	b.Helper()
	st, err := pgstore.Open(b.Context(), pgtest.NewDurable(b), pgstore.Options{Replica: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(st.Close)
	for i, id := range ids {
		key := store.LeaseKey{Channel: "C1", Thread: "1." + itoaBench(i)}
		if _, err := st.AcquireLease(b.Context(), key); err != nil {
			b.Fatal(err)
		}
		rec := store.SessionRecord{Data: json.RawMessage(`{}`), Meta: store.SessionMeta{
			ID: id, Channel: key.Channel, Thread: key.Thread, Updated: time.Now()}}
		if err := st.PutSession(b.Context(), rec); err != nil { // binds the session to the lease
			b.Fatal(err)
		}
	}
	h.cfg.Store = st
	if h.eng, err = New(h.cfg); err != nil {
		b.Fatal(err)
	}
}

func itoaBench(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

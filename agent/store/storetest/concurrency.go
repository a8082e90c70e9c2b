package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

var concurrencyCases = []testCase{
	{"ConcurrentSessionsAllCommit", testConcurrentSessions},
}

// Many sessions at once, as under a burst of commands: each one's steps,
// record and dedup claims interleave with the others', and every write
// lands where it belongs (run it with -race).
func testConcurrentSessions(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	const sessions, steps = 24, 8
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprint("T1/C1/1.", i)
			for s := range steps {
				list := todos(planning.TodoInProgress)
				list[0].Content = fmt.Sprint(id, " step ", s)
				err := b.AppendStep(ctx, id, store.Step{First: 2 * s, Messages: msgs(fmt.Sprint(id, " call ", s), fmt.Sprint(id, " result ", s)),
					Todos: &list, State: json.RawMessage(fmt.Sprintf(`{"step":%d}`, s))})
				if err != nil {
					t.Error(err)
					return
				}
				rec := record("T1", "C1", fmt.Sprint("1.", i), "U1", time.Duration(s)*time.Second)
				rec.Meta.Active = s < steps-1
				if err := b.PutSession(ctx, rec); err != nil {
					t.Error(err)
				}
				if _, err := b.Claim(ctx, []string{fmt.Sprint("ev:", i, ".", s)}, at(time.Duration(s)*time.Second)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range sessions {
		id := fmt.Sprint("T1/C1/1.", i)
		sess, err := b.LoadSession(ctx, id)
		must(t, err)
		if len(sess.Messages) != 2*steps || !sameJSON(sess.State, []byte(fmt.Sprintf(`{"step":%d}`, steps-1))) {
			t.Errorf("%s: %d messages, state %s", id, len(sess.Messages), sess.State)
		}
		if len(sess.Todos) != 1 || sess.Todos[0].Content != fmt.Sprint(id, " step ", steps-1) {
			t.Errorf("%s: todos %+v", id, sess.Todos)
		}
	}
	recs, err := b.ListChannel(ctx, "C1")
	must(t, err)
	active, err := b.ListActive(ctx)
	must(t, err)
	keys, err := b.Claimed(ctx, time.Time{})
	must(t, err)
	if len(recs) != sessions || len(active) != 0 || len(keys) != sessions*steps {
		t.Errorf("%d records, %d active, %d claims; want %d, 0, %d", len(recs), len(active), len(keys), sessions, sessions*steps)
	}
}

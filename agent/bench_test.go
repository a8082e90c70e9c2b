package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	goopenai "github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"
)

// instantModel answers in-process without I/O: a todo_write read (a no-op
// tool) until steps calls were made, then a final text. It isolates the
// engine's own per-step cost (loop, events, tool dispatch, persistence).
type instantModel struct {
	steps  int64
	writes bool // accepted todo_writes (a changed list every step) instead of reads
	calls  atomic.Int64
}

func (m *instantModel) Complete(context.Context, ModelRequest) (Answer, error) {
	msg := Message{Role: RoleAssistant}
	if n := m.calls.Add(1); n <= m.steps {
		args := `{}`
		if m.writes {
			args = fmt.Sprintf(`{"todos":[{"id":"1","content":"step %d","status":"pending"}]}`, n)
		}
		msg.ToolCalls = []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: todoWriteName, Arguments: args}}}
	} else {
		msg.Content = "done"
	}
	return Answer{Message: msg, Usage: Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}, nil
}

// measure runs f and reports µs and allocations per step.
func measure(b *testing.B, steps int, f func()) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	f()
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(elapsed.Microseconds())/float64(steps), "µs/step")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(steps), "allocs/step")
}

// BenchmarkStep: one step is a model call, one no-op tool call, its events
// and the step's bbolt commit (fsync included). inprocess-todos makes every
// step's todo_write an accepted write, stored with the step's one commit.
func BenchmarkStep(b *testing.B) {
	for _, writes := range []bool{false, true} {
		name := "inprocess"
		if writes {
			name = "inprocess-todos" // every step's todo_write is accepted
		}
		for _, where := range append(dbPlaces(), dbPlace{name: dbPostgres}) {
			b.Run(name+"/db="+where.name, func(b *testing.B) {
				model := &instantModel{steps: int64(b.N), writes: writes}
				h := newHarness(b, func(c *Config) { c.Model = model; c.MaxSteps = b.N + 1 })
				if where.name == dbPostgres {
					h.onPostgres(b, "bench")
				} else {
					h.moveDB(where.dir(b))
				}
				b.ReportAllocs()
				measure(b, b.N, func() {
					if _, err := h.eng.Run(context.Background(), "bench", task("go"), RunOptions{Events: func(Event) {}}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
	// Over HTTP each request carries the whole conversation, so runs are
	// kept to 10 tool steps plus the final answer, on fresh sessions. The
	// same fake answers plain and streamed, so the two differ only in the
	// wire format and its reading.
	// http-stream-flushed sends each event in a write of its own, as an
	// endpoint generating tokens does: it adds a wake-up per event on both
	// sides of the loopback, on the same two cores.
	for _, mode := range []struct {
		name     string
		stream   bool
		fakeOpts []fakemodel.Option
	}{
		{"http-plain", false, nil},
		{"http-stream", true, []fakemodel.Option{fakemodel.WithBufferedStreams()}},
		{"http-stream-flushed", true, nil},
	} {
		for _, where := range dbPlaces() {
			b.Run(mode.name+"/db="+where.name, func(b *testing.B) { benchHTTPStep(b, mode.stream, mode.fakeOpts, where) })
		}
	}
}

func benchHTTPStep(b *testing.B, stream bool, fakeOpts []fakemodel.Option, where dbPlace) {
	const perRun = 10
	opts := append([]fakemodel.Option{fakemodel.WithoutRecording()}, fakeOpts...)
	srv := fakemodel.New(append(opts, fakemodel.WithHandler(func(req goopenai.ChatCompletionRequest) fakemodel.Reply {
		if len(toolMessages(req)) < perRun {
			return fakemodel.ToolCall(todoWriteName, `{}`)
		}
		return fakemodel.Text("done")
	}))...)
	b.Cleanup(srv.Close)
	model, err := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "k", Stream: stream})
	if err != nil {
		b.Fatal(err)
	}
	h := newHarness(b, func(c *Config) { c.Model = model })
	h.moveDB(where.dir(b))
	runs := (b.N + perRun - 1) / perRun
	measure(b, runs*(perRun+1), func() {
		for i := range runs {
			if _, err := h.eng.Run(context.Background(), fmt.Sprintf("bench-%d", i), task("go"), RunOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPersistStep: committing one step (assistant tool call, tool
// result, usage) to bbolt, on a new and on a long session: appending is
// independent of the conversation's length.
func BenchmarkPersistStep(b *testing.B) {
	for _, where := range dbPlaces() {
		for _, prefill := range []int{0, 5000} {
			b.Run(fmt.Sprintf("db=%s/history=%d", where.name, prefill), func(b *testing.B) {
				h := newHarness(b)
				h.moveDB(where.dir(b))
				benchPersist(b, h.store, prefill)
			})
		}
	}
}

// benchPersist encodes and commits each step as a run's persist does.
func benchPersist(b *testing.B, st Store, prefill int) {
	one := []Message{
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"command":"go test ./..."}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "ok  \tgithub.com/example/pkg\t0.012s\n[exit code 0]"},
	}
	var history []Message
	for len(history) < prefill {
		history = append(history, one...)
	}
	ctx := context.Background()
	commit := func(first int, msgs []Message, u sessionState) error {
		enc, err := encodeMessages(msgs)
		if err != nil {
			return err
		}
		state, err := encodeState(u)
		if err != nil {
			return err
		}
		return st.AppendStep(ctx, "s", store.Step{First: first, Messages: enc, State: state})
	}
	if err := commit(0, history, sessionState{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	measure(b, b.N, func() {
		for i := range b.N {
			if err := commit(len(history)+i*len(one), one, sessionState{LastPrompt: i}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// dbPlace is where a benchmark keeps its bbolt file: the temp dir on disk
// (fsync cost included, noisy on a shared machine) and, when present,
// tmpfs, where fsync costs nothing, to show the engine's CPU cost alone.
// dbPostgres is no file: PostgreSQL with durable commits (onPostgres), for
// BenchmarkStep.
const dbPostgres = "postgres"

type dbPlace struct {
	name string
	dir  func(b *testing.B) string
}

func dbPlaces() []dbPlace {
	places := []dbPlace{{"disk", func(b *testing.B) string { return b.TempDir() }}}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		places = append(places, dbPlace{"tmpfs", func(b *testing.B) string {
			dir, err := os.MkdirTemp("/dev/shm", "h9-bench-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}})
	}
	return places
}

// BenchmarkCommitFloor is bbolt's floor for one durable commit on this
// disk: a one-key transaction (two fdatasyncs: pages, then meta). The
// harness overhead of BenchmarkStep/inprocess/db=disk cannot go below it
// without giving up durability.
func BenchmarkCommitFloor(b *testing.B) {
	for _, where := range dbPlaces() {
		b.Run("db="+where.name, func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(where.dir(b), "floor.db"), 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for i := 0; b.Loop(); i++ {
				err := db.Update(func(tx *bolt.Tx) error {
					bk, err := tx.CreateBucketIfNotExists([]byte("b"))
					if err != nil {
						return err
					}
					return bk.Put([]byte("k"), []byte{byte(i)})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/bot/fakeslack"
)

// BenchmarkIdleCost: a data directory holding 10,000 finished sessions
// (each a copy of one real session: bot record, agent conversation of
// 8 messages, 3 todos). Per iteration: open the DB, start agent and Bot,
// wait until the socket is connected (start-up), then the heap after GC
// with the bot running. Budgets: start-up < 1 s, heap < 50 MiB. The
// fixture is built once (b.Loop), so the CI smoke stays quick.
func BenchmarkIdleCost(b *testing.B) {
	const sessions = 10000
	handler := func(req openai.ChatCompletionRequest) fakemodel.Reply {
		switch toolSteps(req) { // worked() is two tool results
		case 0:
			return worked("a:completed", "b:in_progress", "c:pending")
		case 2:
			return fakemodel.ToolCall("read_file", `{"path":"missing.txt"}`)
		case 3:
			return worked("a:completed", "b:completed", "c:in_progress")
		case 5:
			return worked("a:completed", "b:completed", "c:completed")
		}
		return fakemodel.Text("all three done")
	}
	dir := b.TempDir()
	e := newBenchEnv(b, dir, 0, handler, nil)
	if _, err := e.slack.SlashCommand(context.Background(), fakeslack.SlashCommand{Text: "run the template session"}); err != nil {
		b.Fatal(err)
	}
	e.waitFor(b, "the template session", func() bool { return e.model.Calls() >= 5 && e.bot.reg.idleCount() == 0 })
	e.stop()
	st := openStore(b, e.db)
	if err := cloneSessions(st, sessions-1); err != nil {
		b.Fatal(err)
	}
	if recs, err := st.ListChannel(context.Background(), "C1"); err != nil || len(recs) != sessions {
		b.Fatalf("fixture has %d sessions (%v), want %d", len(recs), err, sessions)
	}
	e.db.Close()
	compact(b, filepath.Join(dir, "h9.db"))

	var startups []time.Duration
	var heap uint64
	for b.Loop() {
		start := time.Now()
		e.startBot(b, dir, nil)
		startups = append(startups, time.Since(start))
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, ms.HeapAlloc)
		e.stop()
		e.db.Close()
	}
	b.ReportMetric(percentile(startups, 50), "startup-ms")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
}

// compact rewrites the bbolt file at path without the free pages that
// building the fixture in thousands of commits left, as one long-lived
// file of finished sessions would be after bbolt reused them.
func compact(b *testing.B, path string) {
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	dst, err := bolt.Open(path+".compact", 0o600, &bolt.Options{Timeout: time.Second})
	if err == nil {
		err = bolt.Compact(dst, src, 0)
	}
	for _, db := range []*bolt.DB{src, dst} {
		if db != nil {
			if cerr := db.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err == nil {
		err = os.Rename(path+".compact", path)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// cloneSessions copies the one session in the store (bot record and agent
// data) n times under new thread timestamps, many at once so that their
// commits are shared.
func cloneSessions(st *boltstore.Store, n int) error {
	ctx := context.Background()
	recs, err := st.ListChannel(ctx, "C1")
	if err != nil || len(recs) != 1 {
		return fmt.Errorf("template session: %d records, %v", len(recs), err)
	}
	tmpl, err := decodeSession(recs[0])
	if err != nil {
		return err
	}
	data, err := st.LoadSession(ctx, tmpl.ID)
	if err != nil {
		return err
	}
	var g errgroup
	for i := range n {
		rec := tmpl.clone()
		rec.ThreadTS = fmt.Sprintf("1600000000.%06d", i)
		rec.ChecklistTS = fmt.Sprintf("1600000001.%06d", i)
		rec.ID = newSessionID(rec.Team, rec.Channel, rec.ThreadTS)
		g.run(func() error {
			r, err := rec.record()
			if err != nil {
				return err
			}
			if err := st.PutSession(ctx, r); err != nil {
				return err
			}
			return st.AppendStep(ctx, rec.ID, store.Step{Messages: data.Messages, Todos: &data.Todos, State: data.State})
		})
	}
	return g.wait()
}

// errgroup runs functions at most 64 at a time and keeps the first error.
type errgroup struct {
	wg   sync.WaitGroup
	sem  chan struct{}
	once sync.Once
	err  error
}

func (g *errgroup) run(f func() error) {
	if g.sem == nil {
		g.sem = make(chan struct{}, 64)
	}
	g.sem <- struct{}{}
	g.wg.Go(func() {
		defer func() { <-g.sem }()
		if err := f(); err != nil {
			g.once.Do(func() { g.err = err })
		}
	})
}

func (g *errgroup) wait() error {
	g.wg.Wait()
	return g.err
}

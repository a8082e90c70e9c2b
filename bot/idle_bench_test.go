package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/fakemodel"
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
		switch toolSteps(req) {
		case 0:
			return fakemodel.ToolCall("todo_write", todos("a:completed", "b:in_progress", "c:pending"))
		case 1:
			return fakemodel.ToolCall("read_file", `{"path":"missing.txt"}`)
		case 2:
			return fakemodel.ToolCall("todo_write", todos("a:completed", "b:completed", "c:in_progress"))
		case 3:
			return fakemodel.ToolCall("todo_write", todos("a:completed", "b:completed", "c:completed"))
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
	if err := e.db.Update(func(tx *bolt.Tx) error { return cloneSessions(tx, sessions-1) }); err != nil {
		b.Fatal(err)
	}
	var stored int
	_ = e.db.View(func(tx *bolt.Tx) error { stored = tx.Bucket(bucketSessions).Stats().KeyN; return nil })
	if stored != sessions {
		b.Fatalf("fixture has %d sessions, want %d", stored, sessions)
	}
	e.db.Close()

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

// cloneSessions copies the one session in the DB (bot record and agent
// bucket) n times under new thread timestamps.
func cloneSessions(tx *bolt.Tx, n int) error {
	bs := tx.Bucket(bucketSessions)
	id, raw := bs.Cursor().First()
	if id == nil {
		return fmt.Errorf("no template session")
	}
	var rec Session
	if err := json.Unmarshal(raw, &rec); err != nil {
		return err
	}
	agentSessions := tx.Bucket([]byte("agent_sessions"))
	tmpl := agentSessions.Bucket(id)
	if tmpl == nil {
		return fmt.Errorf("no agent data for %s", id)
	}
	for i := range n {
		rec.ThreadTS = fmt.Sprintf("1600000000.%06d", i)
		rec.ChecklistTS = fmt.Sprintf("1600000001.%06d", i)
		rec.ID = sessionID(rec.Team, rec.Channel, rec.ThreadTS)
		data, err := json.Marshal(&rec)
		if err != nil {
			return err
		}
		if err := bs.Put([]byte(rec.ID), data); err != nil {
			return err
		}
		dst, err := agentSessions.CreateBucket([]byte(rec.ID))
		if err != nil {
			return err
		}
		if err := copyBucket(dst, tmpl); err != nil {
			return err
		}
	}
	return nil
}

func copyBucket(dst, src *bolt.Bucket) error {
	return src.ForEach(func(k, v []byte) error {
		if v != nil {
			return dst.Put(k, v)
		}
		sub, err := dst.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(sub, src.Bucket(k))
	})
}

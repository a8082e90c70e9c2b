package bot

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// Issue 26's measurements (BENCHMARKS.md, "Issue 26 — goroutines and
// capacity"): how many goroutines h9 keeps at rest and after a burst,
// and how steps per second and heap grow with the sessions running at
// once. The fakes run in the same process, so goroutines are told apart
// by their stacks; the heap figures include the fakes' own records of
// every call and are an upper bound for h9's.

// census counts the process's goroutines: pool are the keep-alive
// connections of h9's HTTP clients (net/http's persistConn read and write
// loops, two per idle connection), fakes the fake Slack's and fake
// model's (their handlers and server-side connections), own the rest:
// h9's, and the benchmark's few.
type census struct{ total, pool, fakes int }

func (c census) own() int { return c.total - c.pool - c.fakes }

func takeCensus() census {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var c census
	for _, g := range strings.Split(string(buf), "\n\n") {
		c.total++
		switch {
		case strings.Contains(g, "net/http.(*persistConn)."):
			c.pool++
		case strings.Contains(g, "/bot/fakeslack.") || strings.Contains(g, "/agent/fakemodel.") ||
			strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http/httptest."):
			c.fakes++
		}
	}
	return c
}

// BenchmarkGoroutinesAfterBurst: h9's goroutines at rest, then a burst of
// 500 "/h9 plan" commands (each a session and a run); once the last run
// has ended, how long until h9's own goroutines are back to the resting
// count (budget: 5 s), how many keep-alive connections stay pooled and
// how long until the pool is back to its resting size.
func BenchmarkGoroutinesAfterBurst(b *testing.B) {
	e := newBenchEnv(b, "", 0, textReply("ok"), nil)
	ctx := context.Background()
	sent := 0
	send := func(n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if _, err := e.slack.SlashCommand(ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("plan burst %d", sent+i)}); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		sent += n
		e.waitFor(b, "every run", func() bool { return e.model.Calls() >= sent })
	}
	send(1) // warm: the first session's lazy set-up is not the burst's
	rest := restingCensus(b, e)
	var back, peak, drained []float64
	var after census
	for b.Loop() {
		var top int
		stopPeak := sampleEvery(20*time.Millisecond, func() { top = max(top, takeCensus().own()) })
		send(500)
		stopPeak()
		end := time.Now()
		ms := untilCensus(end, 30*time.Second, func(c census) bool { return c.own() <= rest.own() })
		time.Sleep(time.Until(end.Add(5 * time.Second)))
		after = takeCensus()
		poolMS := untilCensus(end, time.Minute, func(c census) bool { return c.pool <= rest.pool })
		back, peak, drained = append(back, ms), append(peak, float64(top)), append(drained, poolMS)
	}
	b.ReportMetric(float64(rest.own()), "own-at-rest")
	b.ReportMetric(float64(rest.pool), "pool-at-rest")
	b.ReportMetric(median(peak), "own-peak")
	b.ReportMetric(median(back), "ms-back-to-rest")
	b.ReportMetric(float64(after.own()), "own-after-5s")
	b.ReportMetric(float64(after.pool), "pool-after-5s")
	b.ReportMetric(float64(after.total), "total-after-5s")
	b.ReportMetric(median(drained), "ms-pool-back-to-rest")
}

// untilCensus polls the goroutines from start until ok holds, for at most
// limit: the milliseconds it took, or -1.
func untilCensus(start time.Time, limit time.Duration, ok func(census) bool) float64 {
	for time.Since(start) < limit {
		if ok(takeCensus()) {
			return float64(time.Since(start).Milliseconds())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1
}

// restingCensus waits for every session to be idle and the count to hold.
func restingCensus(b *testing.B, e *benchEnv) census {
	e.waitFor(b, "every session idle", func() bool { return e.bot.reg.idleCount() == 0 })
	time.Sleep(time.Second)
	return takeCensus()
}

// sampleEvery calls f every d until the returned stop is called.
func sampleEvery(d time.Duration, f func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			f()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

func median(xs []float64) float64 {
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x * float64(time.Millisecond))
	}
	return percentile(ds, 50)
}

// capacitySteps is each capacity session's model calls: 9 no-op tool
// steps and a final answer.
const capacitySteps = 10

func capacityModel(req openai.ChatCompletionRequest) fakemodel.Reply {
	if toolSteps(req) < capacitySteps-1 {
		return fakemodel.ToolCall("todo_write", `{}`)
	}
	return fakemodel.Text("finished")
}

// BenchmarkCapacityCurve: 1, 10, 100 and 1,000 "/h9 run" sessions started
// at once against an instant model, 10 steps each: steps per second at
// each size, and the live heap per running session beyond the first
// (peak live heap during the run over the resting one). Budget: at 1,000
// sessions at least 90 % of the best steps per second of 10, 100 and
// 1,000, and under 256 KiB of heap per session beyond the first.
func BenchmarkCapacityCurve(b *testing.B) {
	sizes := []int{1, 10, 100, 1000}
	rate, heap, slack := map[int][]float64{}, map[int][]float64{}, map[int][]float64{}
	round := 0
	for b.Loop() {
		for _, n := range sizes {
			round++
			r, h, calls := capacityRound(b, round, n)
			rate[n], heap[n], slack[n] = append(rate[n], r), append(heap[n], h), append(slack[n], calls)
		}
	}
	best := 0.0
	for _, n := range sizes[1:] {
		best = max(best, median(rate[n]))
		b.ReportMetric(median(rate[n]), fmt.Sprintf("steps/s@%d", n))
		b.ReportMetric(median(slack[n]), fmt.Sprintf("slack-calls/session@%d", n))
	}
	b.ReportMetric(100*median(rate[1000])/best, "%-of-best@1000")
	one := median(heap[1])
	for _, n := range sizes[1:] {
		b.ReportMetric((median(heap[n])-one)/float64(n-1)/1024, fmt.Sprintf("heap-KiB/session@%d", n))
	}
}

// capacityRound starts n sessions at once on a bot and fakes of their own
// (what earlier rounds left in the fake Slack's records does not slow the
// next) and waits for their last step; it returns the steps per second
// and the peak live heap over the resting one, and the Web API calls per
// session (a longer run edits its checklist more often: one edit a second).
func capacityRound(b *testing.B, round, n int) (stepsPerSec, heapBytes, slackCalls float64) {
	b.StopTimer()
	e := newBenchEnv(b, "", 0, capacityModel, nil)
	defer e.close()
	b.StartTimer()
	ctx := context.Background()
	runtime.GC()
	rest := liveHeap()
	var peak uint64
	stop := sampleEvery(10*time.Millisecond, func() { peak = max(peak, liveHeap()) })
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := e.slack.SlashCommand(ctx, fakeslack.SlashCommand{Text: fmt.Sprintf("run cap %d-%d", round, i)}); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	for e.model.Calls() < n*capacitySteps {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d of %d steps after 5 minutes", e.model.Calls(), n*capacitySteps)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wall := time.Since(start)
	stop()
	e.waitFor(b, "every session idle", func() bool { return e.bot.reg.idleCount() == 0 })
	calls := len(e.slack.Calls(""))
	return float64(n*capacitySteps) / wall.Seconds(), float64(peak) - float64(rest), float64(calls) / float64(n)
}

// close stops the bot and its fakes before the benchmark ends.
func (e *benchEnv) close() {
	if e.stop != nil {
		e.stop()
		e.db.Close()
	}
	e.slack.Close()
	e.model.Close()
}

// liveHeap is the heap the last GC found live: what is held, not garbage
// waiting for the next cycle.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

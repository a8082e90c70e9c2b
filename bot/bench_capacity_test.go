package bot

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
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

// BenchmarkCapacityCurve: 10, 100 and 1,000 "/h9 run" sessions started
// at once against an instant model, 10 steps each: steps per second at
// each size, the process's CPU time per step (the fakes' included: the
// figure the shared machine's load disturbs least) and the Web API calls
// per session (and at 1,000 as before their checklist edits were paced);
// then the live heap per running session beyond the first,
// with sessions held running by a slow model. Budget: at 1,000 sessions
// at least 90 % of the best steps per second of the three, and under
// 256 KiB of heap per running session beyond the first.
func BenchmarkCapacityCurve(b *testing.B) {
	sizes := []capacitySize{{"10", 10, editsPerInterval}, {"100", 100, editsPerInterval},
		{"1000", 1000, editsPerInterval}, {"1000-unpaced", 1000, math.MaxInt64}}
	got := map[string]capacityResult{}
	heap := map[int][]float64{}
	for b.Loop() {
		// Sizes take turns, a few seconds each, in a rotating order, so a
		// change in the shared machine's load falls on all of them alike.
		for cycle := range capacityCycles {
			for i := range sizes {
				sz := sizes[(i+cycle)%len(sizes)]
				got[sz.label] = got[sz.label].plus(capacityTurn(b, sz))
			}
		}
		for _, n := range []int{1, 100, 1000} {
			heap[n] = append(heap[n], heldHeap(b, n))
		}
	}
	best := 0.0
	for _, sz := range sizes {
		r := got[sz.label]
		if sz.budget == editsPerInterval {
			best = max(best, r.rate())
		}
		b.ReportMetric(r.rate(), "steps/s@"+sz.label)
		b.ReportMetric(float64(r.cpu.Microseconds())/float64(r.steps), "cpu-µs/step@"+sz.label)
		b.ReportMetric(float64(r.slackCalls)/float64(r.sessions), "slack-calls/session@"+sz.label)
	}
	b.ReportMetric(100*got["1000"].rate()/best, "%-of-best@1000")
	for _, n := range []int{100, 1000} {
		b.ReportMetric((median(heap[n])-median(heap[1]))/float64(n-1)/1024, fmt.Sprintf("heap-KiB/session@%d", n))
	}
}

// capacitySize is one point of the curve: n sessions at once, their
// checklist edits spaced past budget of them (math.MaxInt64: never, as
// before issue 26).
type capacitySize struct {
	label  string
	n      int
	budget int64
}

// capacityCycles is how many turns each size takes; capacityTurnWall is
// the least wall time of one turn (rounds of a size are repeated until it
// has passed; one round of 1,000 sessions takes longer).
const (
	capacityCycles   = 3
	capacityTurnWall = 3 * time.Second
)

// capacityResult adds up rounds: steps, their wall and CPU time, the
// sessions and their Web API calls.
type capacityResult struct {
	steps, sessions, slackCalls int
	wall, cpu                   time.Duration
}

func (r capacityResult) plus(o capacityResult) capacityResult {
	return capacityResult{steps: r.steps + o.steps, sessions: r.sessions + o.sessions, slackCalls: r.slackCalls + o.slackCalls,
		wall: r.wall + o.wall, cpu: r.cpu + o.cpu}
}

func (r capacityResult) rate() float64 { return float64(r.steps) / r.wall.Seconds() }

// capacityTurn runs rounds of sz for capacityTurnWall.
func capacityTurn(b *testing.B, sz capacitySize) capacityResult {
	var sum capacityResult
	for sum.wall < capacityTurnWall {
		sum = sum.plus(capacityRound(b, sz.n, sz.budget))
	}
	return sum
}

// capacityRound starts n sessions at once on a bot and fakes of their own
// (what earlier rounds left in the fake Slack's records does not slow the
// next) against an instant model and waits for their last step. Past
// editBudget checklists editing at once their edits are spaced
// (math.MaxInt64: never, as before issue 26).
func capacityRound(b *testing.B, n int, editBudget int64) capacityResult {
	b.StopTimer()
	e := newBenchEnv(b, "", 0, capacityModel, nil)
	e.bot.api.EditBudget = editBudget // before any session: no checklist reads it yet
	defer e.close()
	b.StartTimer()
	cpu0, start := processCPU(), time.Now()
	startSessions(b, e, n)
	waitSteps(b, e, n*capacitySteps, start)
	r := capacityResult{steps: n * capacitySteps, sessions: n, wall: time.Since(start), cpu: processCPU() - cpu0}
	e.waitFor(b, "every session idle", func() bool { return e.bot.reg.idleCount() == 0 })
	r.slackCalls = len(e.slack.Calls(""))
	return r
}

// heldHeap is the live heap of n sessions running at once (their model
// answers after 100 ms, so all are in flight when it is measured, half
// way through their steps) over the bot's resting heap.
func heldHeap(b *testing.B, n int) float64 {
	b.StopTimer()
	e := newBenchEnv(b, "", 100*time.Millisecond, capacityModel, nil)
	defer e.close()
	b.StartTimer()
	rest, start := settledHeap(), time.Now()
	startSessions(b, e, n)
	waitSteps(b, e, n*capacitySteps/2, start)
	runtime.GC()
	held := liveHeap()
	waitSteps(b, e, n*capacitySteps, start)
	e.waitFor(b, "every session idle", func() bool { return e.bot.reg.idleCount() == 0 })
	return float64(held) - float64(rest)
}

// settledHeap is the live heap once what earlier rounds left is freed:
// their goroutines wind down after their fakes closed, so the heap is
// read again until two readings 200 ms apart agree within 1 % (at most
// 5 s).
func settledHeap() uint64 {
	runtime.GC()
	last := liveHeap()
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		now := liveHeap()
		if diff := int64(now) - int64(last); max(diff, -diff) <= int64(last)/100 {
			return now
		}
		last = now
	}
	return last
}

// startSessions sends n "/h9 run" commands at once.
func startSessions(b *testing.B, e *benchEnv, n int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := e.slack.SlashCommand(context.Background(), fakeslack.SlashCommand{Text: fmt.Sprintf("run cap %d", i)}); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

// waitSteps waits until the model has answered want requests.
func waitSteps(b *testing.B, e *benchEnv, want int, start time.Time) {
	for e.model.Calls() < want {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d of %d steps after 5 minutes", e.model.Calls(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// processCPU is the process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

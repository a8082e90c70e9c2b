package bot

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/testenv"
)

// The model of the surfaces' benchmark writes as a fast model does (a
// 64-byte piece every benchPieceGap, about 130 tokens a second): each
// answer a few hundred bytes of text and its tool calls, so that a run
// writes for several coalescing intervals at the default
// H9_COALESCE_INTERVAL.
const (
	benchPieceGap    = 30 * time.Millisecond
	benchAnswerBytes = 6 * 64 // six of the fake's streamed pieces
)

// BenchmarkSurfacesCalls: Slack Web API calls per session of a planned,
// approved 10-step run whose model writes text in every answer, with
// Slack's agent surfaces on and with every surface method refused (h9 as
// before), side by side, at the default coalescing interval. Budgets:
// at most 5 status calls per session whatever the number of steps; one
// chat.startStream and one chat.stopStream per run's text and at most one
// chat.appendStream per coalescing interval while the model writes; the
// checklist's own edits unchanged; the time from the model's first token
// of a run to the first of its text in the thread under 1.5 s (p50).
func BenchmarkSurfacesCalls(b *testing.B) {
	testenv.Full(b, "a real bot against the fakes")
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("surfaces=%t", on), func(b *testing.B) {
			model := &benchScript{}
			e := newBenchEnv(b, "", 0, model.handle, nil)
			if !on {
				refuseSurfaces(e.slack)
			}
			const steps = 10
			interval := e.bot.cfg.CoalesceInterval
			before := e.slack.CallCounts()
			sessions := 0
			var firstText []time.Duration
			var appends, writing float64
			for b.Loop() {
				s := tenStepSession(b, e, model, steps, on)
				firstText = append(firstText, s.firstText...)
				appends += float64(s.appends)
				writing += s.writing.Seconds()
				sessions++
			}
			after := e.slack.CallCounts()
			per := func(method string) float64 { return float64(after[method]-before[method]) / float64(sessions) }
			total := 0
			for m, n := range after {
				total += n - before[m]
			}
			b.ReportMetric(per("agents.sessions.setStatus"), "status-calls/session")
			b.ReportMetric(per("chat.startStream"), "startStream/session")
			b.ReportMetric(per("chat.appendStream"), "appendStream/session")
			b.ReportMetric(per("chat.stopStream"), "stopStream/session")
			b.ReportMetric(per("chat.update"), "chat.update/session")
			b.ReportMetric(per("chat.postMessage"), "posts/session")
			b.ReportMetric(float64(total)/float64(sessions), "slack-calls/session")
			b.ReportMetric(appends/writing, "appends/s-writing")
			b.ReportMetric(1/interval.Seconds(), "appends/s-budget")
			b.ReportMetric(percentile(firstText, 50), "first-text-p50-ms")
			b.ReportMetric(percentile(firstText, 100), "first-text-max-ms")
		})
	}
}

// benchScript serves the fake model's replies in order and notes when
// each reply with text was served: the model's first token of it (the
// fake sends the first piece at once).
type benchScript struct {
	mu      sync.Mutex
	replies []fakemodel.Reply
	began   []time.Time
}

func (s *benchScript) enqueue(r ...fakemodel.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

func (s *benchScript) handle(openai.ChatCompletionRequest) fakemodel.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return fakemodel.Status(400) // unscripted: the session fails and the benchmark with it
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	if r.Content != "" {
		s.began = append(s.began, time.Now())
	}
	return r
}

// firstBegan is when the first reply with text was served after t.
func (s *benchScript) firstBegan(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.began {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// talking is reply r writing benchAnswerBytes of text marked tag, slowly.
func talking(r fakemodel.Reply, tag string) fakemodel.Reply {
	var b strings.Builder
	for b.Len() < benchAnswerBytes {
		b.WriteString(tag)
		b.WriteString(" words ")
	}
	r.Content, r.ChunkGap = strings.TrimSpace(b.String()), benchPieceGap
	return r
}

// sessionFigures are one session's measurements.
type sessionFigures struct {
	firstText []time.Duration // per run: the model's first token to its first text in the thread
	appends   int             // the execution run's appendStream calls
	writing   time.Duration   // the execution run's first token to its end
}

// tenStepSession plans steps todos, approves auto-run and waits for done
// (and, with the surfaces on, for Slack to show the session active). The
// model writes text in the plan and in every answer of the execution.
func tenStepSession(b *testing.B, e *benchEnv, model *benchScript, steps int, on bool) sessionFigures {
	b.Helper()
	pairs := make([]string, steps)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("t%d:pending", i)
	}
	start := time.Now()
	model.enqueue(fakemodel.ToolCall("todo_write", todos(pairs...)), talking(fakemodel.Reply{}, "planmark"))
	thread := e.fakes.StartThread(testUser, "plan a ten-step task")
	review := e.fakes.WaitMessage(thread, render.ActionApproveAuto, 1)
	for i := range pairs {
		done := make([]string, steps)
		for j := range done {
			done[j] = fmt.Sprintf("t%d:pending", j)
			if j <= i {
				done[j] = fmt.Sprintf("t%d:completed", j)
			}
		}
		model.enqueue(talking(worked(done...), fmt.Sprintf("step%dmark", i)))
	}
	model.enqueue(talking(fakemodel.Reply{}, "finalmark"))
	approved := time.Now()
	e.fakes.Click(testUser, review.TS, render.ActionApproveAuto)
	e.fakes.WaitChecklist(thread, fmt.Sprintf("%d/%d tasks", steps, steps), "done")
	e.fakes.WaitMessage(thread, "finalmark", 1)
	if on {
		e.waitFor(b, "the session active", func() bool {
			a, _ := e.slack.AgentSession(testChannel, thread)
			return a.Status == "active"
		})
	}
	var f sessionFigures
	// Without streaming the execution run's first text in the thread is
	// the post of its words (the last answer's) at its end.
	for _, run := range []struct {
		after  time.Time
		marker string
	}{{start, "planmark"}, {approved, "finalmark"}} {
		t0 := model.firstBegan(run.after)
		t1 := firstTextSeen(e.slack, thread, run.marker, t0, on)
		if t0.IsZero() || t1.IsZero() {
			b.Fatalf("no first token (%v) or no text in the thread (%v) for %s", t0, t1, run.marker)
		}
		f.firstText = append(f.firstText, t1.Sub(t0))
	}
	t0 := model.firstBegan(approved)
	end := time.Now()
	for _, c := range e.slack.Calls("") {
		switch {
		case !c.At.After(t0):
		case c.Method == "chat.appendStream":
			f.appends++
		case c.Method == "chat.stopStream":
			end = c.At
		}
	}
	f.writing = end.Sub(t0)
	return f
}

// firstTextSeen is when the fake Slack first received text of the run
// marked marker after t0: its stream's start with the surfaces on; the
// post of its words without.
func firstTextSeen(sl *fakeslack.Server, thread, marker string, t0 time.Time, on bool) time.Time {
	for _, c := range sl.Calls("") {
		if !c.At.After(t0) || c.SlackError != "" {
			continue
		}
		switch {
		case on && c.Method == "chat.startStream" && c.Params["thread_ts"] == thread,
			!on && c.Method == "chat.postMessage" && c.Params["thread_ts"] == thread &&
				strings.Contains(c.Params["text"]+c.Params["blocks"], marker):
			return c.At
		}
	}
	return time.Time{}
}

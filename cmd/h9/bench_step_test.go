package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/workspace"
)

// BenchmarkStepMetrics is agent.BenchmarkStep/inprocess (one step: a model
// answer, a no-op todo_write read, its events and the step's bbolt commit)
// on two engines side by side, one with the agent's metrics off (nil), one
// counting into Prometheus (each step reports a model request with its
// latency and its tokens). Each iteration runs one 100-step run on each,
// in turns (which goes first alternates), so both see the same machine.
// The DBs are on tmpfs where there is one, so fsync does not drown what
// the hooks cost.
func BenchmarkStepMetrics(b *testing.B) {
	const perRun = 100
	arms := []*stepArm{{name: "off"}, {name: "on", metrics: newPromMetrics()}}
	for _, a := range arms {
		a.eng = benchEngine(b, instantModel{perRun: perRun}, a.metrics.forAgent(), perRun+1)
	}
	for i := 0; b.Loop(); i++ {
		for j := range arms {
			arms[(i+j)%2].run(b, fmt.Sprint("bench-", i))
		}
	}
	for _, a := range arms {
		steps := float64(a.runs * perRun)
		b.ReportMetric(float64(a.elapsed.Microseconds())/steps, a.name+"-µs/step")
		b.ReportMetric(float64(a.mallocs)/steps, a.name+"-allocs/step")
	}
}

// stepArm is one engine of BenchmarkStepMetrics and what its runs took.
type stepArm struct {
	name    string
	metrics *promMetrics // nil: off
	eng     *agent.Engine
	runs    int
	elapsed time.Duration
	mallocs uint64
}

func (a *stepArm) run(b *testing.B, session string) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := a.eng.Run(context.Background(), session, agent.Request{Intent: agent.IntentTask, Text: "go"},
		agent.RunOptions{Events: func(agent.Event) {}})
	a.elapsed += time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatal(err)
	}
	a.runs++
	a.mallocs += after.Mallocs - before.Mallocs
}

// benchEngine is an engine on a bbolt file (tmpfs when there is one) and
// unsandboxed workspaces.
func benchEngine(b *testing.B, model agent.Model, m agent.Metrics, maxSteps int) *agent.Engine {
	b.Helper()
	dir := b.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err = os.MkdirTemp("/dev/shm", "h9-bench-"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	db, st, err := openStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ws, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, workspacesDir), Sandbox: "none"})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := agent.New(agent.Config{Store: st, Model: model, ModelName: "bench", Workspaces: ws, MaxSteps: maxSteps, Metrics: m})
	if err != nil {
		b.Fatal(err)
	}
	return eng
}

// instantModel answers in-process: a todo_write read until the run has
// perRun tool results, then a final text, with usage as an endpoint
// reports it. A run of a new session sends the system prompt, the task,
// then two messages per step.
type instantModel struct{ perRun int }

func (m instantModel) Complete(_ context.Context, req agent.ModelRequest) (agent.Answer, error) {
	msg := agent.Message{Role: agent.RoleAssistant, Content: "done"}
	if (len(req.Messages)-2)/2 < m.perRun {
		msg.Content = ""
		msg.ToolCalls = []agent.ToolCall{{ID: "call_1", Type: "function", Function: agent.FunctionCall{Name: "todo_write", Arguments: `{}`}}}
	}
	return agent.Answer{Message: msg, FinishReason: "stop", Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}, nil
}

// BenchmarkMetricsHooks is what each hook costs with Prometheus behind it,
// per call, alone and from both cores at once: an ack (the socket loop's
// share), a Web API request, a model try with its tokens.
func BenchmarkMetricsHooks(b *testing.B) {
	m := newPromMetrics()
	hooks := []struct {
		name string
		call func()
	}{
		{"ack", func() { m.EnvelopeAcked("slash_commands", 300*time.Microsecond, false) }},
		{"slack-request", func() { m.SlackRequest("chat.postMessage", 20*time.Millisecond, false) }},
		{"model-try", func() { m.ModelRequest(time.Second, ""); m.Tokens(1000, 100, false) }},
	}
	for _, h := range hooks {
		b.Run(h.name, func(b *testing.B) {
			for b.Loop() {
				h.call()
			}
		})
		b.Run(h.name+"-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					h.call()
				}
			})
		})
	}
}

package mcp_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/testenv"
	bolt "go.etcd.io/bbolt"
)

const token = "secret-token-0123456789"

// harness is the agent's engine with a fake model over HTTP, a real bbolt
// store, real workspaces and the MCP manager under test as its ToolSource.
type harness struct {
	t     *testing.T
	model *fakemodel.Server
	wsm   *workspace.Manager
	eng   *agent.Engine
	mgr   *mcp.Manager
	logs  *syncBuffer
	calls *countingMetrics
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type countingMetrics struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingMetrics) MCPCall(kind, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[kind+" "+outcome]++
}

func (c *countingMetrics) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// newHarness makes the harness; tune may change the manager's options and
// the engine's configuration before they are made.
func newHarness(t *testing.T, sandbox string, servers []mcp.Server, callTimeout time.Duration, tune ...func(*mcp.Options, *agent.Config)) *harness {
	t.Helper()
	needSandbox(t, sandbox)
	dir := t.TempDir()
	h := &harness{t: t, model: fakemodel.New(), logs: &syncBuffer{}, calls: &countingMetrics{n: map[string]int{}}}
	t.Cleanup(h.model.Close)
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "workspaces"), Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	h.wsm = wsm
	log := slog.New(slog.NewTextHandler(h.logs, nil))
	opts := mcp.Options{Servers: servers, CallTimeout: callTimeout, Logger: log, Metrics: h.calls}
	cfg := agent.Config{ModelName: "fake-model", Workspaces: wsm, RetryBaseDelay: time.Millisecond, Logger: log}
	for _, f := range tune {
		f(&opts, &cfg)
	}
	h.mgr = mcp.New(opts)
	t.Cleanup(h.mgr.Close)
	db, err := bolt.Open(filepath.Join(dir, "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := boltstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	model, err := openai.New(openai.Config{BaseURL: h.model.URL(), APIKey: "test-key", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Model, cfg.Tools = st, model, h.mgr
	h.eng, err = agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// run runs one prompt and returns the tool results the run produced.
func (h *harness) run(session string, mode planning.PlanMode, opts agent.RunOptions, replies ...fakemodel.Reply) []agent.Event {
	h.t.Helper()
	h.model.Enqueue(replies...)
	var mu sync.Mutex
	var finished []agent.Event
	opts.Mode = mode
	opts.Events = func(ev agent.Event) {
		if ev.Kind == agent.EventToolFinished {
			mu.Lock()
			finished = append(finished, ev)
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := h.eng.Run(ctx, session, agent.Request{Intent: agent.IntentTask, Text: "use the team's tools"}, opts); err != nil {
		h.t.Fatalf("run failed: %v", err)
	}
	return finished
}

// offered is the tool names of the model's request number i.
func (h *harness) offered(i int) []string {
	h.t.Helper()
	reqs := h.model.Requests()
	if i >= len(reqs) {
		h.t.Fatalf("request %d of %d", i, len(reqs))
	}
	var names []string
	for _, tl := range reqs[i].Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

// toolResults are the tool messages of the model's last request.
func (h *harness) toolResults() []string {
	reqs := h.model.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// noToken fails if the token is in any model request or log line.
func (h *harness) noToken() {
	h.t.Helper()
	for i, b := range h.model.Bodies() {
		if bytes.Contains(b, []byte(token)) {
			h.t.Errorf("model request %d carries the token", i)
		}
	}
	if strings.Contains(h.logs.String(), token) {
		h.t.Errorf("the logs carry the token:\n%s", h.logs.String())
	}
}

func call(name, args string) fakemodel.Reply {
	return fakemodel.Reply{Calls: []fakemodel.Call{{Name: name, Args: args}}}
}

func has(list []string, s string) bool { return slices.Contains(list, s) }

// needSandbox skips (fails in CI) a test or benchmark whose sandbox
// ("bwrap", "landlock") the machine lacks; under -short it skips: the
// sandbox is the full run's.
func needSandbox(t testing.TB, sandbox string) {
	t.Helper()
	switch sandbox {
	case "bwrap":
		testenv.Need(t, "bwrap")
	case "landlock":
		testenv.Need(t, "landlock:1")
	}
}

package agent_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/workspace"
)

// endpointEnv is the real engine (bbolt file, workspaces) against the fake
// endpoint over HTTP, through the agent's exported API only.
type endpointEnv struct {
	t   *testing.T
	srv *fakemodel.Server
	eng *agent.Engine
	wsm *workspace.Manager
}

// envSetup tunes an endpointEnv: the fake's options, the model's and the
// engine's configuration.
type envSetup struct {
	stream bool
	fake   []fakemodel.Option
	model  func(*openai.Config, *fakemodel.Server)
	engine func(*agent.Config)
}

func newEndpointEnv(t *testing.T, s envSetup) *endpointEnv {
	t.Helper()
	srv := fakemodel.New(s.fake...)
	t.Cleanup(srv.Close)
	mc := openai.Config{BaseURL: srv.URL(), APIKey: "test-key", Stream: s.stream}
	if s.model != nil {
		s.model(&mc, srv)
	}
	model, err := openai.New(mc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := boltstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "workspaces"), Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{Store: st, Model: model, ModelName: "fake-model", Workspaces: wsm, RetryBaseDelay: time.Millisecond}
	if s.engine != nil {
		s.engine(&cfg)
	}
	eng, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &endpointEnv{t: t, srv: srv, eng: eng, wsm: wsm}
}

// bothModes runs f streaming and with plain requests.
func bothModes(t *testing.T, f func(t *testing.T, stream bool)) {
	t.Run("stream", func(t *testing.T) { f(t, true) })
	t.Run("plain", func(t *testing.T) { f(t, false) })
}

// run runs one prompt in a session and returns what came of it.
func (e *endpointEnv) run(session, prompt string) (agent.Result, []agent.Event, error) {
	e.t.Helper()
	var mu sync.Mutex
	var evs []agent.Event
	res, err := e.eng.Run(context.Background(), session, agent.Request{Intent: agent.IntentTask, Text: prompt}, agent.RunOptions{Events: func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		evs = append(evs, ev)
	}})
	mu.Lock()
	defer mu.Unlock()
	return res, slices.Clone(evs), err
}

// mustRun is run that fails the test on error.
func (e *endpointEnv) mustRun(session, prompt string) agent.Result {
	e.t.Helper()
	res, evs, err := e.run(session, prompt)
	if err != nil {
		e.t.Fatalf("run: %v (last event %+v)", err, evs[len(evs)-1])
	}
	return res
}

// stillUsable proves the session's stored history is one the fake (which
// refuses what OpenAI refuses) accepts: a further run succeeds.
func (e *endpointEnv) stillUsable(session string) {
	e.t.Helper()
	e.srv.Enqueue(fakemodel.Text("still here"))
	if res := e.mustRun(session, "are you still there?"); res.Text != "still here" {
		e.t.Errorf("follow-up text = %q", res.Text)
	}
}

// lastError is the text of the run's EventError, failing if there is none.
func lastError(t *testing.T, evs []agent.Event) string {
	t.Helper()
	last := evs[len(evs)-1]
	if last.Kind != agent.EventError {
		t.Fatalf("last event = %v %q, want an error", last.Kind, last.Text)
	}
	return last.Text
}

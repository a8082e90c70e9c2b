package bot

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/workspace"
)

// benchEnv is a real Bot, agent engine and bbolt file against the fake
// Slack and the fake model over loopback, for benchmarks (testing.TB, no
// payload checks, the bot's default coalescing unless cfg says otherwise).
type benchEnv struct {
	fakes *h9test.Fakes // slack and model are its
	slack *fakeslack.Server
	model *fakemodel.Server
	db    *bolt.DB
	store *boltstore.Store
	bot   *Bot
	stop  func()
	// repos, when set, gives the bot repositories (made on its workspaces).
	repos func(*workspace.Manager) Repos
}

// newBenchEnv starts the fakes (model answers with handler after latency)
// and a bot on a DB in dir ("" = a new temp dir).
func newBenchEnv(tb testing.TB, dir string, latency time.Duration, handler fakemodel.Handler, cfgFn func(*Config)) *benchEnv {
	tb.Helper()
	if dir == "" {
		dir = tb.TempDir()
	}
	// Buffered streams: the fake's own per-event writes would take the two
	// cores from the bot being measured (BENCHMARKS.md, issue 13).
	e := benchEnvOn(benchFakes(tb, fakemodel.WithoutRecording(), fakemodel.WithBufferedStreams(), fakemodel.WithLatency(latency), fakemodel.WithHandler(handler)))
	e.startBot(tb, dir, cfgFn)
	tb.Cleanup(func() {
		if e.stop != nil {
			e.stop()
			e.db.Close()
		}
	})
	return e
}

// benchFakes are a benchmark's fakes: a Slack that echoes the bot's posts,
// a model with opts, and a minute for each wait.
func benchFakes(tb testing.TB, opts ...fakemodel.Option) *h9test.Fakes {
	tb.Helper()
	return h9test.New(tb, h9test.Options{Slack: fakeslack.Options{EchoBotMessages: true}, Model: opts, WaitTimeout: time.Minute, Channel: testChannel})
}

// benchEnvOn is a benchEnv on fakes, its bot not yet started.
func benchEnvOn(fakes *h9test.Fakes) *benchEnv {
	return &benchEnv{fakes: fakes, slack: fakes.Slack, model: fakes.Model}
}

// startBot opens the DB in dir and runs a Bot until stop; it returns once
// the socket is connected.
func (e *benchEnv) startBot(tb testing.TB, dir string, cfgFn func(*Config)) {
	tb.Helper()
	db := h9test.OpenBolt(tb, dir)
	ws, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "workspaces"), Sandbox: "none"})
	if err != nil {
		tb.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := openStore(tb, db)
	eng, err := agent.New(agent.Config{
		Store: st, Model: modelAt(tb, e.model.URL()), ModelName: "fake-model",
		Workspaces: ws, MaxRetries: 1, MaxSteps: 200, Logger: logger,
	})
	if err != nil {
		tb.Fatal(err)
	}
	opts := e.slack.Options()
	cfg := Config{
		BotToken: opts.BotToken, AppToken: opts.AppToken, APIURL: e.slack.APIURL(),
		Store: st, Leases: st, Agent: eng, SandboxLevel: string(ws.Level()), Logger: logger, Workspaces: ws,
	}
	if e.repos != nil {
		cfg.Repos = e.repos(ws)
	}
	if cfgFn != nil {
		cfgFn(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	e.db, e.store, e.bot = db, st, b
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
		e.stop = nil
	}
	e.fakes.WaitConnected()
}

// waitFor polls cond for up to a minute.
func (e *benchEnv) waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	benchWait(tb, e.slack, what, cond)
}

// benchWait polls cond for up to a minute.
func benchWait(tb testing.TB, sl *fakeslack.Server, what string, cond func() bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sl.WaitFor(ctx, what, cond); err != nil {
		tb.Fatal(err)
	}
}

// toolSteps is how many tool results the request's conversation holds
// since its last user message (i.e. in the current run).
func toolSteps(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == openai.ChatMessageRoleUser {
			break
		}
		if m.Role == openai.ChatMessageRoleTool {
			n++
		}
	}
	return n
}

// percentile is the p-th percentile (0..100) of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return float64(s[i]) / float64(time.Millisecond)
}

// idleCount is the number of live actors (0 when every session is idle and
// every checklist edit has landed).
func (r *registry) idleCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.actors)
}

package bot

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/testenv"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fleetTTL is the replicas' lease TTL in fleet tests: short, so a handoff
// is quick, and long enough for a busy machine to renew in time.
const fleetTTL = 2 * time.Second

// fleetEnv is several real bots (each its own agent engine and PostgreSQL
// store, as separate h9 processes would be) sharing one database, one
// workspace root, one fake Slack (each through its own tagged API URL)
// and one fake model.
type fleetEnv struct {
	*env     // the fakes, the helpers; its bot and store are unused
	url      string
	replicas map[string]*replica
	// cfgFn, when set, completes each replica's configuration (its
	// repositories on the shared workspaces, for one).
	cfgFn func(ws *workspace.Manager, c *Config)
}

type replica struct {
	name  string
	store *pgstore.Store
	bot   *Bot
	stop  func()
}

func newFleetEnv(t *testing.T, names ...string) *fleetEnv {
	t.Helper()
	return newFleetEnvWith(t, nil, names...)
}

// newFleetEnvWith is newFleetEnv with cfgFn completing each replica's
// configuration.
func newFleetEnvWith(t *testing.T, cfgFn func(*workspace.Manager, *Config), names ...string) *fleetEnv {
	t.Helper()
	testenv.Need(t, "postgres") // and, under -short, left to the full run
	e := prepareEnv(t, t.TempDir())
	f := &fleetEnv{env: e, url: pgtest.New(t), replicas: map[string]*replica{}, cfgFn: cfgFn}
	t.Cleanup(func() {
		for _, r := range f.replicas {
			if r.stop != nil {
				r.stop()
			}
		}
	})
	for _, n := range names {
		f.start(n)
	}
	if err := e.slack.WaitConnections(e.ctx, len(names)); err != nil {
		t.Fatal(err)
	}
	return f
}

// start runs replica name: a store, an engine and a bot of its own.
func (f *fleetEnv) start(name string) *replica {
	t := f.t
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("H9_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", name)
	}
	st, err := pgstore.Open(f.ctx, f.url, pgstore.Options{Replica: name, LeaseTTL: fleetTTL, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.NewManager(workspace.Config{Root: f.wsRoot, Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.New(agent.Config{Store: st, Model: modelAt(t, f.model.URL()), ModelName: "fake-model",
		Workspaces: ws, MaxRetries: 1, RetryBaseDelay: time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	opts := f.slack.Options()
	cfg := Config{BotToken: opts.BotToken, AppToken: opts.AppToken, APIURL: f.slack.APIURLFor(name),
		Store: st, Leases: st, Fleet: st, Agent: eng, SandboxLevel: string(ws.Level()), Logger: logger,
		CoalesceInterval: 50 * time.Millisecond}
	if f.cfgFn != nil {
		f.cfgFn(ws, &cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, store: st, bot: b}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	r.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica %s: Run: %v", name, err)
		}
		st.Close()
		r.stop = nil
	}
	f.replicas[name] = r
	return r
}

// callsBy counts the Web API calls of method a replica made in thread
// (its thread_ts or ts parameter; "" = any).
func (f *fleetEnv) callsBy(replica, method, thread string) int {
	n := 0
	for _, c := range f.slack.Calls(method) {
		if c.Replica == replica && (thread == "" || c.Params["thread_ts"] == thread || c.Params["ts"] == thread) {
			n++
		}
	}
	return n
}

// checkOneOfEach fails unless the thread has one root, one checklist and
// at most one message carrying each marker.
func (f *fleetEnv) checkOneOfEach(thread string, markers ...string) {
	f.t.Helper()
	if n := len(f.botMessages(thread, "h9_cl_title")); n != 1 {
		f.t.Errorf("thread %s: %d checklists, want 1", thread, n)
	}
	for _, m := range markers {
		if n := len(f.botMessages(thread, m)); n > 1 {
			f.t.Errorf("thread %s: %d messages with %q, want at most 1", thread, n, m)
		}
	}
	roots := 0
	for _, m := range f.rootMessages() {
		if m.TS == thread {
			roots++
		}
	}
	if roots != 1 {
		f.t.Errorf("thread %s: %d roots", thread, roots)
	}
}

package bot

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"
	"unicode"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/planning"
)

func TestNewRejectsMissingDeps(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := openStore(t, db)
	full := Config{BotToken: "xoxb-x", AppToken: "xapp-x", Store: st, Leases: st, Agent: nopAgent{}}
	for name, mutate := range map[string]func(*Config){
		"no bot token":    func(c *Config) { c.BotToken = "" },
		"no app token":    func(c *Config) { c.AppToken = "" },
		"no store":        func(c *Config) { c.Store = nil },
		"no leases":       func(c *Config) { c.Leases = nil },
		"no agent":        func(c *Config) { c.Agent = nil },
		"bad api url":     func(c *Config) { c.APIURL = "http://x/api" },
		"negative slots":  func(c *Config) { c.MaxConcurrentRuns = -1 },
		"negative budget": func(c *Config) { c.SessionTokenBudget = -1 },
		"negative price":  func(c *Config) { c.PriceInput = -0.5 },
		"infinite price":  func(c *Config) { c.PriceOutput = math.Inf(1) },
		"NaN price":       func(c *Config) { c.PriceOutput = math.NaN() },
	} {
		cfg := full
		mutate(&cfg)
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig", name, err)
		}
	}
	b, err := New(full)
	if err != nil {
		t.Fatal(err)
	}
	if b.cfg.CoalesceInterval != defaultCoalesceInterval || b.cfg.APIURL != defaultAPIURL {
		t.Errorf("defaults not applied: %+v", b.cfg)
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"plan add a thing":    {"plan", "add a thing"},
		"  RUN\tfix   it  ":   {"run", "fix   it"},
		"status":              {"status", ""},
		"":                    {"", ""},
		"plan\n\nmulti\nline": {"plan", "multi\nline"},
	} {
		verb, arg := parseCommand(in)
		if verb != want[0] || arg != want[1] {
			t.Errorf("parseCommand(%q) = %q, %q; want %q, %q", in, verb, arg, want[0], want[1])
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"plan x", "run", " status ", "help me", "plan <!channel> <@U1>", "\u00a0plan\u2003x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		verb, arg := parseCommand(s)
		for _, r := range verb {
			if unicode.IsSpace(r) {
				t.Fatalf("verb %q has a space", verb)
			}
		}
		if len(arg) > len(s) {
			t.Fatalf("grew: %q %q from %q", verb, arg, s)
		}
	})
}

// nopAgent satisfies Agent for construction tests that never run anything.
type nopAgent struct{}

func (nopAgent) Run(context.Context, string, agent.Request, agent.RunOptions) (agent.Result, error) {
	return agent.Result{}, nil
}
func (nopAgent) Snapshot(context.Context, string) (agent.Snapshot, error) {
	return agent.Snapshot{}, nil
}
func (nopAgent) CancelOpenTodos(context.Context, string) ([]planning.TodoItem, error) {
	return nil, nil
}

// Package h9test starts the fakes at h9's process boundary for a test — a
// fake Slack and a fake model behind real sockets — and waits on what the
// bot shows there. The bot's tests, cmd/h9's binary tests and the
// benchmarks build their harnesses on it (ARCHITECTURE.md, "Tests").
// It is imported only by tests.
package h9test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge/fakegithub"
	bolt "go.etcd.io/bbolt"
)

// Options choose the fakes' configuration.
type Options struct {
	Slack fakeslack.Options
	Model []fakemodel.Option
	// Timeout bounds every wait of the test together (default 30 s).
	Timeout time.Duration
	// WaitTimeout, when set, gives each wait a deadline of its own and the
	// test none: a benchmark's b.N rounds must not share one.
	WaitTimeout time.Duration
	// Channels and Users (id → name) are registered with the fake Slack.
	Channels, Users map[string]string
	// Channel is the channel the waits and Dump read (default "C1").
	Channel string
}

// Fakes are one test's fake Slack and fake model, closed when it ends.
type Fakes struct {
	TB      testing.TB
	Ctx     context.Context
	Slack   *fakeslack.Server
	Model   *fakemodel.Server
	Channel string
	perWait time.Duration
}

// New starts the fakes; their cleanup runs after any the caller registers
// later (a bot to stop first).
func New(tb testing.TB, o Options) *Fakes {
	tb.Helper()
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Channel == "" {
		o.Channel = "C1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	if o.WaitTimeout > 0 {
		ctx, cancel = context.WithCancel(context.Background())
	}
	f := &Fakes{TB: tb, Ctx: ctx, Channel: o.Channel, perWait: o.WaitTimeout,
		Slack: fakeslack.New(o.Slack), Model: fakemodel.New(o.Model...)}
	for id, name := range o.Channels {
		f.Slack.AddChannel(id, name)
	}
	for id, name := range o.Users {
		f.Slack.AddUser(id, name)
	}
	tb.Cleanup(func() {
		f.Slack.Close()
		f.Model.Close()
		cancel()
	})
	return f
}

// WaitFor waits until cond holds, failing the test (after Dump) when the
// test's timeout passes first.
func (f *Fakes) WaitFor(what string, cond func() bool) {
	f.TB.Helper()
	ctx, cancel := f.waitCtx()
	defer cancel()
	if err := f.Slack.WaitFor(ctx, what, cond); err != nil {
		f.Dump()
		f.TB.Fatal(err)
	}
}

// WaitConnected waits until the bot holds a socket.
func (f *Fakes) WaitConnected() {
	f.TB.Helper()
	ctx, cancel := f.waitCtx()
	defer cancel()
	if err := f.Slack.WaitConnected(ctx); err != nil {
		f.TB.Fatal(err)
	}
}

// waitCtx bounds one wait: by its own deadline, or the test's.
func (f *Fakes) waitCtx() (context.Context, context.CancelFunc) {
	if f.perWait > 0 {
		return context.WithTimeout(f.Ctx, f.perWait)
	}
	return context.WithCancel(f.Ctx)
}

// Dump logs what the bot showed in the channel, so a wait that timed out
// says what happened instead (a refusal, an error, a missing post).
func (f *Fakes) Dump() {
	f.TB.Helper()
	for _, m := range f.Slack.Messages(f.Channel) {
		f.TB.Logf("message ts=%s thread=%s bot=%t text=%q", m.TS, m.ThreadTS, m.BotID != "", render.Truncate(m.Text, 300))
	}
	for _, m := range f.Slack.Ephemerals(f.Channel, "") {
		f.TB.Logf("ephemeral to %s: %q", m.EphemeralUser, render.Truncate(m.Text, 300))
	}
	f.TB.Logf("model calls: %d", f.Model.Calls())
}

// WaitCalls waits until the fake model has seen n requests.
func (f *Fakes) WaitCalls(n int) {
	f.TB.Helper()
	f.WaitFor("model request #"+itoa(n), func() bool { return f.Model.Calls() >= n })
}

// GitHub starts a fake GitHub accepting token that serves the bare
// repository remote as repo (owner/name, pushable), closed when the test
// ends.
func GitHub(tb testing.TB, token, repo, remote string) *fakegithub.Server {
	gh := fakegithub.New(token)
	tb.Cleanup(gh.Close)
	gh.AddRepo(repo, remote, true)
	return gh
}

// OpenBolt opens the data directory dir's h9.db as h9 does; the caller
// closes it, after the bot on it has stopped.
func OpenBolt(tb testing.TB, dir string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(dir, "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// BoltStore builds the store on db, as h9 does at each start.
func BoltStore(tb testing.TB, db *bolt.DB) *boltstore.Store {
	tb.Helper()
	st, err := boltstore.New(db)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// LogBuffer collects what several goroutines (a bot's logger, a
// subprocess's stderr) write, for the test to read while they run.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

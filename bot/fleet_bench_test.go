package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/pgstore"
	"github.com/h9-app/h9/agent/store/pgtest"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace"
)

// The fleet's benchmarks (issue 16, see BENCHMARKS.md): the ack burst and
// the isolation benchmark on one bbolt replica and on three replicas
// sharing a PostgreSQL database that syncs its commits as bbolt does
// (pgtest.NewDurable), side by side in one run. The three replicas run in
// this one process, so they share its cores: the figures are the fleet's
// cost (claims, leases, routing, the database's round trips), not the
// speed-up of more machines.

func BenchmarkFleetAckLatency(b *testing.B) {
	b.Run("backend=bbolt/replicas=1", func(b *testing.B) {
		e := newBenchEnv(b, "", 0, textReply("ok"), nil)
		ackBurst(b, e.slack, e.model)
	})
	b.Run("backend=postgres/replicas=3", func(b *testing.B) {
		f := newBenchFleet(b, 3, 0, textReply("ok"))
		ackBurst(b, f.slack, f.model)
	})
}

func BenchmarkFleetIsolation(b *testing.B) {
	b.Run("backend=bbolt/replicas=1", func(b *testing.B) {
		e := newBenchEnv(b, "", isolationLatency, isolationModel, nil)
		isolationRounds(b, e.slack)
	})
	b.Run("backend=postgres/replicas=3", func(b *testing.B) {
		f := newBenchFleet(b, 3, isolationLatency, isolationModel)
		isolationRounds(b, f.slack)
	})
}

// benchFleet is n replicas (a store, an engine and a bot each) on one
// durable PostgreSQL database, one workspace root, one fake Slack and one
// fake model answering with handler after latency.
type benchFleet struct {
	slack *fakeslack.Server
	model *fakemodel.Server
}

func newBenchFleet(tb testing.TB, n int, latency time.Duration, handler fakemodel.Handler) *benchFleet {
	tb.Helper()
	fakes := benchFakes(tb, fakemodel.WithoutRecording(), fakemodel.WithLatency(latency), fakemodel.WithHandler(handler))
	f := &benchFleet{slack: fakes.Slack, model: fakes.Model}
	url, root := pgtest.NewDurable(tb), tb.TempDir()
	for i := range n {
		stop := startBenchReplica(tb, f, url, root, fmt.Sprint("r", i+1))
		tb.Cleanup(stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.slack.WaitConnections(ctx, n); err != nil {
		tb.Fatal(err)
	}
	return f
}

// startBenchReplica runs one replica until the returned stop.
func startBenchReplica(tb testing.TB, f *benchFleet, url, root, name string) (stop func()) {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := pgstore.Open(context.Background(), url, pgstore.Options{Replica: name, Logger: logger})
	if err != nil {
		tb.Fatal(err)
	}
	ws, err := workspace.NewManager(workspace.Config{Root: root, Sandbox: "none"})
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := agent.New(agent.Config{Store: st, Model: modelAt(tb, f.model.URL()), ModelName: "fake-model",
		Workspaces: ws, MaxRetries: 1, MaxSteps: 200, Logger: logger})
	if err != nil {
		tb.Fatal(err)
	}
	opts := f.slack.Options()
	b, err := New(Config{BotToken: opts.BotToken, AppToken: opts.AppToken, APIURL: f.slack.APIURLFor(name),
		Store: st, Leases: st, Fleet: st, Agent: eng, SandboxLevel: string(ws.Level()), Logger: logger})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("replica %s: Run: %v", name, err)
		}
		st.Close()
	}
}

package bot

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/testenv"
)

// TestAuthTestFailures: a refused token stops the bot at start; any other
// auth.test failure (a Slack hiccup) is logged and the bot still connects.
func TestAuthTestFailures(t *testing.T) {
	testenv.Full(t, "a whole Slack flow through the fake Slack and model")
	tests := []struct {
		slackErr string
		wantRun  bool
	}{
		{"invalid_auth", false},
		{"token_revoked", false},
		{"fatal_error", true},
		{"unknown_method", true},
	}
	for _, tt := range tests {
		t.Run(tt.slackErr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			slack := fakeslack.New(fakeslack.Options{})
			defer slack.Close()
			b := bareBot(t, slack)
			slack.FailNext("auth.test", tt.slackErr)
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- b.Run(runCtx) }()
			if !tt.wantRun {
				err := <-done
				stop()
				if err == nil || !strings.Contains(err.Error(), "auth.test") {
					t.Fatalf("Run = %v, want an auth.test error", err)
				}
				return
			}
			if err := slack.WaitConnected(ctx); err != nil {
				t.Fatal(err)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatalf("Run after cancel = %v", err)
			}
		})
	}
}

// bareBot is a Bot on slack with a real store and agent (whose model is
// never called), not yet running.
func bareBot(t *testing.T, slack *fakeslack.Server) *Bot {
	t.Helper()
	model := fakemodel.New()
	t.Cleanup(model.Close)
	dir := t.TempDir()
	db := h9test.OpenBolt(t, dir)
	t.Cleanup(func() { db.Close() })
	ws, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "ws"), Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, db)
	eng, err := agent.New(agent.Config{Store: st, Model: modelAt(t, model.URL()), ModelName: "m", Workspaces: ws})
	if err != nil {
		t.Fatal(err)
	}
	opts := slack.Options()
	b, err := New(Config{BotToken: opts.BotToken, AppToken: opts.AppToken, APIURL: slack.APIURL(),
		Store: st, Leases: st, Agent: eng, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

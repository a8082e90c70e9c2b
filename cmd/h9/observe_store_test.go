package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/workspace"
)

// /readyz asks the store: a connected h9 whose bbolt file was closed
// under it is not ready, while /healthz still says the process runs.
func TestReadyzFollowsTheStore(t *testing.T) {
	slack := fakeslack.New(fakeslack.Options{BotToken: testBotToken, AppToken: testAppToken})
	defer slack.Close()
	model := fakemodel.New()
	defer model.Close()
	db, b, base := startByHand(t, slack, model)
	ready := func() int { code, _ := httpGet(t, base+"/readyz"); return code }
	if err := slack.WaitFor(t.Context(), "/readyz to say ready", func() bool { return ready() == 200 }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, body := httpGet(t, base+"/readyz"); code != 503 || !strings.Contains(body, "store does not answer") {
		t.Errorf("/readyz with the store closed = %d %q, want 503 naming the store", code, body)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz with the store closed = %d, want 200: the process runs", code)
	}
	if !b.Connected() {
		t.Error("the socket went down too: the 503 must be the store's")
	}
}

// startByHand puts run's own pieces together (store, engine, bot,
// serveHTTP) so that the test holds the database, and runs the bot until
// the test ends. It returns the database, the bot and the server's URL.
func startByHand(t *testing.T, slack *fakeslack.Server, model *fakemodel.Server) (*bolt.DB, *bot.Bot, string) {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), "data")
	setEnv(t, "SLACK_API_URL", slack.APIURL(), "OPENAI_BASE_URL", model.URL(), "H9_DATA_DIR", dataDir,
		"H9_SANDBOX", "none", "H9_HTTP_ADDR", "127.0.0.1:0")
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	db, st, err := openStore(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dataDir, workspacesDir), Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	metrics := newMetrics(cfg)
	engine, err := newEngine(cfg, st, ws, log, metrics.forAgent(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bot.New(bot.Config{BotToken: cfg.SlackBotToken, AppToken: cfg.SlackAppToken, APIURL: cfg.SlackAPIURL,
		Store: st, Leases: st, Agent: engine, Logger: log, Metrics: metrics.forBot()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serveHTTP(cfg, metrics, b, st, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	ran := make(chan error, 1)
	go func() { ran <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-ran
		srv.stop()
		db.Close()
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	return db, b, "http://" + srv.addr
}

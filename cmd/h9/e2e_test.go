package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
)

const e2eBotToken, e2eAppToken, e2eAPIKey = "xoxb-e2e-bot-secret", "xapp-e2e-app-secret", "sk-e2e-model-secret"

// TestBinaryServesAgainstFakes starts the real binary against the fake Slack and the fake
// model: it must connect, carry a /h9 run through the agent to Slack, stop cleanly on
// SIGTERM with the database closed, and never print a secret.
func TestBinaryServesAgainstFakes(t *testing.T) {
	fakes := h9test.New(t, h9test.Options{
		Slack:   fakeslack.Options{BotToken: e2eBotToken, AppToken: e2eAppToken, Logf: t.Logf},
		Model:   []fakemodel.Option{fakemodel.WithModels("gpt-e2e")},
		Timeout: 90 * time.Second, Channels: map[string]string{"C1": "general"}, Users: map[string]string{"U1": "alice"},
	})
	slack, model, ctx := fakes.Slack, fakes.Model, fakes.Ctx
	model.Enqueue(fakemodel.Text("hello from the fake model"))

	dataDir := filepath.Join(t.TempDir(), "data")
	cmd, exited, stdout, stderr := startE2E(t, slack, model, dataDir)

	if err := slack.WaitConnected(ctx); err != nil {
		t.Fatalf("h9 never connected to the fake Slack: %v", err)
	}
	fakes.Slash("U1", "C1", "run say hello")
	fakes.WaitFor("the model's answer in the session thread", func() bool {
		for _, m := range slack.Messages("C1") {
			if m.ThreadTS != "" && strings.Contains(m.Text+string(m.Blocks), "hello from the fake model") {
				return true
			}
		}
		return false
	})
	if reqs := model.Requests(); len(reqs) == 0 {
		t.Error("the fake model got no request")
	} else if r := reqs[0]; r.Model != "gpt-e2e" || !r.Stream || r.StreamOptions == nil || !r.StreamOptions.IncludeUsage {
		t.Errorf("model %q, stream %v (%+v): want H9_MODEL's gpt-e2e, streamed with usage by default", r.Model, r.Stream, r.StreamOptions)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("h9 exited with %v after SIGTERM", err)
		}
	case <-ctx.Done():
		t.Fatal("h9 did not stop after SIGTERM")
	}

	checkAfterSIGTERM(t, dataDir, stderr.String()+stdout.String(), slack)
}

// startE2E runs the binary on the fakes; it is killed at the test's end
// unless it exited, and its stderr is logged.
func startE2E(t *testing.T, slack *fakeslack.Server, model *fakemodel.Server, dataDir string) (*exec.Cmd, chan error, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(h9Binary(t))
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"SLACK_BOT_TOKEN=" + e2eBotToken, "SLACK_APP_TOKEN=" + e2eAppToken, "SLACK_API_URL=" + slack.APIURL(),
		"OPENAI_BASE_URL=" + model.URL(), "OPENAI_API_KEY=" + e2eAPIKey, "H9_MODEL=gpt-e2e",
		"H9_DATA_DIR=" + dataDir, "H9_SANDBOX=none", "H9_LOG_LEVEL=debug",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		t.Logf("h9 stderr:\n%s", stderr.String())
	})
	return cmd, exited, &stdout, &stderr
}

// checkAfterSIGTERM: h9 closed its database, logged its start and stop,
// printed no secret and broke no Slack limit.
func checkAfterSIGTERM(t *testing.T, dataDir, output string, slack *fakeslack.Server) {
	db, err := openDB(dataDir, time.Second) // the lock is released: h9 closed its database
	if err != nil {
		t.Fatalf("reopening the data directory: %v", err)
	}
	db.Close()

	logs := output
	for _, want := range []string{"h9 starting", "SANDBOX OFF", "h9 stopped"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	for _, secret := range []string{e2eBotToken, e2eAppToken, e2eAPIKey} {
		if strings.Contains(logs, secret) {
			t.Errorf("h9 printed the secret %q", secret)
		}
	}
	if v := slack.Violations(); len(v) > 0 {
		t.Errorf("Slack limit violations: %v", v)
	}
}

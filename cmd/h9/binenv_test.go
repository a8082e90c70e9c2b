package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
)

// Distinctive secrets: any occurrence outside h9's own memory is a leak.
const (
	binBotToken = "xoxb-binenv-bot-7f3a9c-secret"
	binAppToken = "xapp-binenv-app-51e2d8-secret"
	binAPIKey   = "sk-binenv-model-c0ffee-secret"
)

// lockedBuffer is an io.Writer shared by the test and a subprocess's stderr.
type lockedBuffer = h9test.LogBuffer

// binEnv runs the real h9 binary against a fake Slack and a fake model that
// outlive its restarts, on one data directory.
type binEnv struct {
	t       testing.TB
	fakes   *h9test.Fakes // slack, model and ctx are its
	ctx     context.Context
	slack   *fakeslack.Server
	model   *fakemodel.Server
	dataDir string
	env     []string
	logs    lockedBuffer // stderr of every process, in order

	cmd    *exec.Cmd
	exited chan error
}

func newBinEnv(t testing.TB, extraEnv ...string) *binEnv {
	t.Helper()
	testenv.Full(t, "runs h9 against the fake Slack and model")
	fakes := h9test.New(t, h9test.Options{
		Slack:    fakeslack.Options{BotToken: binBotToken, AppToken: binAppToken, EchoBotMessages: true, EchoEdits: true},
		Model:    []fakemodel.Option{fakemodel.WithModels("gpt-bin")},
		Timeout:  3 * time.Minute,
		Channels: map[string]string{"C1": "general"}, Users: map[string]string{"U1": "alice"},
	})
	e := &binEnv{t: t, fakes: fakes, ctx: fakes.Ctx, slack: fakes.Slack, model: fakes.Model, dataDir: filepath.Join(t.TempDir(), "data")}
	e.env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"SLACK_BOT_TOKEN=" + binBotToken, "SLACK_APP_TOKEN=" + binAppToken, "SLACK_API_URL=" + e.slack.APIURL(),
		"OPENAI_BASE_URL=" + e.model.URL(), "OPENAI_API_KEY=" + binAPIKey, "H9_MODEL=gpt-bin",
		"H9_DATA_DIR=" + e.dataDir, "H9_SANDBOX=none", "H9_COALESCE_INTERVAL=50ms", "H9_LOG_LEVEL=debug",
	}, extraEnv...)
	t.Cleanup(func() {
		if e.cmd != nil {
			e.kill()
		}
		if t.Failed() {
			t.Logf("h9 stderr:\n%s", e.logs.String())
		}
	})
	return e
}

// start runs a new h9 process and waits until it holds a fresh socket.
func (e *binEnv) start() {
	e.t.Helper()
	before := e.slack.ConnectionCount()
	e.cmd = exec.Command(h9Binary(e.t))
	e.cmd.Env = e.env
	e.cmd.Stdout, e.cmd.Stderr = &e.logs, &e.logs
	if err := e.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, ch chan error) { ch <- cmd.Wait() }(e.cmd, e.exited)
	e.waitFor("h9 connected", func() bool { return e.slack.ConnectionCount() > before })
	e.fakes.WaitConnected()
}

// kill is kill -9: no shutdown code runs.
func (e *binEnv) kill() {
	e.t.Helper()
	_ = e.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-e.exited:
	case <-time.After(time.Minute):
		e.t.Fatal("h9 survived SIGKILL")
	}
	e.cmd = nil
}

// restart is kill -9 and a new process on the same data directory.
func (e *binEnv) restart() {
	e.t.Helper()
	e.kill()
	e.start()
}

// stop is SIGTERM, expecting a clean exit.
func (e *binEnv) stop() {
	e.t.Helper()
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-e.exited:
		if err != nil {
			e.t.Errorf("h9 exited with %v after SIGTERM", err)
		}
	case <-e.ctx.Done():
		e.t.Fatal("h9 did not stop after SIGTERM")
	}
	e.cmd = nil
}

func (e *binEnv) waitFor(what string, cond func() bool) {
	e.t.Helper()
	e.fakes.WaitFor(what, cond)
}

// slash runs "/h9 <text>" as U1 in C1; for plan/run it returns the new thread's root ts.
func (e *binEnv) slash(text string) string {
	e.t.Helper()
	if !strings.HasPrefix(text, "plan ") && !strings.HasPrefix(text, "run ") {
		e.fakes.Slash("U1", "C1", text)
		return ""
	}
	return e.fakes.StartThread("U1", text)
}

func (e *binEnv) roots() []fakeslack.Message { return e.fakes.Roots() }

// msgs are the bot's messages in thread carrying marker (text or blocks).
func (e *binEnv) msgs(thread, marker string) []fakeslack.Message {
	return e.fakes.BotMessages(thread, marker)
}

// waitMsg waits for the n-th bot message in thread carrying marker.
func (e *binEnv) waitMsg(thread, marker string, n int) fakeslack.Message {
	e.t.Helper()
	return e.fakes.WaitMessage(thread, marker, n)
}

// waitChecklist waits until the thread's one checklist shows every part.
func (e *binEnv) waitChecklist(thread string, parts ...string) {
	e.t.Helper()
	e.fakes.WaitChecklist(thread, parts...)
}

func (e *binEnv) click(ts, action string) { e.t.Helper(); e.fakes.Click("U1", ts, action) }

// waitEphemeral waits for an ephemeral to U1 in C1 containing every part.
func (e *binEnv) waitEphemeral(parts ...string) {
	e.t.Helper()
	e.fakes.WaitEphemeral("C1", "U1", parts...)
}

// waitCalls waits until the fake model has seen n requests.
func (e *binEnv) waitCalls(n int) { e.t.Helper(); e.fakes.WaitCalls(n) }

func itoa(n int) string { return strconv.Itoa(n) }

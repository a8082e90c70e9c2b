package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/bot/fakeslack"
)

// Distinctive secrets: any occurrence outside h9's own memory is a leak.
const (
	binBotToken = "xoxb-binenv-bot-7f3a9c-secret"
	binAppToken = "xapp-binenv-app-51e2d8-secret"
	binAPIKey   = "sk-binenv-model-c0ffee-secret"
)

// lockedBuffer is an io.Writer shared by the test and a subprocess's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// binEnv runs the real h9 binary against a fake Slack and a fake model that
// outlive its restarts, on one data directory.
type binEnv struct {
	t       testing.TB
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	e := &binEnv{
		t: t, ctx: ctx, dataDir: filepath.Join(t.TempDir(), "data"),
		slack: fakeslack.New(fakeslack.Options{BotToken: binBotToken, AppToken: binAppToken, EchoBotMessages: true, EchoEdits: true}),
		model: fakemodel.New(fakemodel.WithModels("gpt-bin")),
	}
	e.slack.AddChannel("C1", "general")
	e.slack.AddUser("U1", "alice")
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
		e.model.Close()
		e.slack.Close()
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
	if err := e.slack.WaitConnected(e.ctx); err != nil {
		e.t.Fatal(err)
	}
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
	if err := e.slack.WaitFor(e.ctx, what, cond); err != nil {
		e.t.Fatal(err)
	}
}

// slash runs "/h9 <text>" as U1 in C1; for plan/run it returns the new thread's root ts.
func (e *binEnv) slash(text string) string {
	e.t.Helper()
	before := len(e.roots())
	if _, err := e.slack.SlashCommand(e.ctx, fakeslack.SlashCommand{Text: text, UserID: "U1", ChannelID: "C1"}); err != nil {
		e.t.Fatal(err)
	}
	if !strings.HasPrefix(text, "plan ") && !strings.HasPrefix(text, "run ") {
		return ""
	}
	var root string
	e.waitFor("the root message of "+text, func() bool {
		if rs := e.roots(); len(rs) > before {
			root = rs[len(rs)-1].TS
			return true
		}
		return false
	})
	return root
}

func (e *binEnv) roots() []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range e.slack.Messages("C1") {
		if m.ThreadTS == "" && m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// msgs are the bot's messages in thread carrying marker (text or blocks).
func (e *binEnv) msgs(thread, marker string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range e.slack.Thread("C1", thread) {
		if m.BotID != "" && m.TS != thread && (strings.Contains(m.Text, marker) || strings.Contains(string(m.Blocks), marker)) {
			out = append(out, m)
		}
	}
	return out
}

// waitMsg waits for the n-th bot message in thread carrying marker.
func (e *binEnv) waitMsg(thread, marker string, n int) fakeslack.Message {
	e.t.Helper()
	var m fakeslack.Message
	e.waitFor("message with "+marker, func() bool {
		ms := e.msgs(thread, marker)
		if len(ms) >= n {
			m = ms[n-1]
			return true
		}
		return false
	})
	return m
}

// waitChecklist waits until the thread's one checklist shows every part.
func (e *binEnv) waitChecklist(thread string, parts ...string) {
	e.t.Helper()
	e.waitFor("checklist showing "+strings.Join(parts, ", "), func() bool {
		ms := e.msgs(thread, "h9_cl_title")
		if len(ms) != 1 {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(ms[0].Text, p) && !strings.Contains(string(ms[0].Blocks), p) {
				return false
			}
		}
		return true
	})
}

func (e *binEnv) click(ts, action string) {
	e.t.Helper()
	if _, err := e.slack.ClickButton(e.ctx, "U1", "C1", ts, action); err != nil {
		e.t.Fatal(err)
	}
}

// waitEphemeral waits for an ephemeral to U1 in C1 containing every part.
func (e *binEnv) waitEphemeral(parts ...string) {
	e.t.Helper()
	e.waitFor("ephemeral with "+strings.Join(parts, ", "), func() bool {
		for _, m := range e.slack.Ephemerals("C1", "U1") {
			all := m.Text + string(m.Blocks)
			found := true
			for _, p := range parts {
				found = found && strings.Contains(all, p)
			}
			if found {
				return true
			}
		}
		return false
	})
}

// waitCalls waits until the fake model has seen n requests.
func (e *binEnv) waitCalls(n int) {
	e.t.Helper()
	e.waitFor("model request #"+itoa(n), func() bool { return e.model.Calls() >= n })
}

func itoa(n int) string { return strconv.Itoa(n) }

package bot

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace"
)

const (
	testUser    = "U1"
	testChannel = "C1"
	testTeam    = "T1"
)

// env is a real bot against the fake Slack and the fake model, with a real
// agent and store on a bbolt file.
type env struct {
	t      *testing.T
	ctx    context.Context
	slack  *fakeslack.Server
	model  *fakemodel.Server
	db     *bolt.DB
	store  *boltstore.Store // the running bot's
	wsRoot string
	bot    *Bot
	stop   func()
	cfgFn  []func(*Config)
	// repos, when set, gives the bot repositories whose checkouts are
	// made in the bot's workspaces.
	repos func(ws *workspace.Manager) Repos
	logs  *syncBuffer // everything the bot and agent logged
	// workspaces, when set, changes the workspaces' configuration (a
	// real sandbox, a network).
	workspaces func(*workspace.Config)
}

func newEnv(t *testing.T, cfgFn ...func(*Config)) *env {
	t.Helper()
	e := prepareEnv(t, t.TempDir(), cfgFn...)
	e.start()
	return e
}

// prepareEnv is newEnv on the data directory dir, before the bot starts.
func prepareEnv(t *testing.T, dir string, cfgFn ...func(*Config)) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	db, err := bolt.Open(filepath.Join(dir, "h9.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{
		t: t, ctx: ctx, db: db, wsRoot: filepath.Join(dir, "workspaces"), cfgFn: cfgFn,
		slack: fakeslack.New(fakeslack.Options{EchoBotMessages: true, EchoEdits: true}),
		model: fakemodel.New(),
	}
	t.Cleanup(func() {
		if e.stop != nil {
			e.stop()
		}
		e.checkPayloads()
		e.slack.Close()
		e.model.Close()
		db.Close()
	})
	return e
}

// openStore builds the store on db, as h9 does at each start.
func openStore(tb testing.TB, db *bolt.DB) *boltstore.Store {
	tb.Helper()
	st, err := boltstore.New(db)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// newBot builds a Bot (and agent engine) on the env's fakes and DB, not yet running.
func (e *env) newBot() *Bot {
	t := e.t
	t.Helper()
	e.store = openStore(t, e.db)
	wsCfg := workspace.Config{Root: e.wsRoot, Sandbox: "none"}
	if e.workspaces != nil {
		e.workspaces(&wsCfg)
	}
	ws, err := workspace.NewManager(wsCfg)
	if err != nil {
		t.Fatal(err)
	}
	var logOut io.Writer = io.Discard
	if e.logs != nil {
		logOut = e.logs
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if os.Getenv("H9_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	eng, err := agent.New(agent.Config{
		Store: e.store, Model: modelAt(e.t, e.model.URL()), ModelName: "fake-model",
		Workspaces: ws, MaxRetries: 1, RetryBaseDelay: time.Millisecond, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := e.slack.Options()
	cfg := Config{
		BotToken: opts.BotToken, AppToken: opts.AppToken, APIURL: e.slack.APIURL(),
		Store: e.store, Leases: e.store, Agent: eng, SandboxLevel: string(ws.Level()), Logger: logger,
		CoalesceInterval: 50 * time.Millisecond, Workspaces: ws,
	}
	if e.repos != nil {
		cfg.Repos = e.repos(ws)
	}
	for _, f := range e.cfgFn {
		f(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start runs a new Bot on the env's DB.
func (e *env) start() {
	e.t.Helper()
	e.run(e.newBot())
}

// run runs b until e.stop is called; e.stop returns once Run has returned.
func (e *env) run(b *Bot) {
	t := e.t
	t.Helper()
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(runCtx) }()
	e.bot = b
	e.stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("Run did not return after cancel")
		}
		e.stop = nil
	}
	if err := e.slack.WaitConnected(e.ctx); err != nil {
		t.Fatal(err)
	}
}

// restart stops the bot and starts a new one on the same DB.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	conns := e.slack.ConnectionCount()
	e.start()
	e.waitFor("a new socket", func() bool { return e.slack.ConnectionCount() > conns })
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	if err := e.slack.WaitFor(e.ctx, what, cond); err != nil {
		e.dump()
		e.t.Fatal(err)
	}
}

// dump logs what the bot showed in the test channel, so a wait that timed
// out says what happened instead (a refusal, an error, a missing post).
func (e *env) dump() {
	e.t.Helper()
	for _, m := range e.slack.Messages(testChannel) {
		e.t.Logf("message ts=%s thread=%s bot=%t text=%q", m.TS, m.ThreadTS, m.BotID != "", render.Truncate(m.Text, 300))
	}
	for _, m := range e.slack.Ephemerals(testChannel, "") {
		e.t.Logf("ephemeral to %s: %q", m.EphemeralUser, render.Truncate(m.Text, 300))
	}
	e.t.Logf("model calls: %d", e.model.Calls())
}

func (e *env) slash(user, channel, text string) fakeslack.Ack {
	e.t.Helper()
	ack, err := e.slack.SlashCommand(e.ctx, fakeslack.SlashCommand{Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		e.t.Fatal(err)
	}
	return ack
}

// startSession runs "/h9 <verb> <task>" and returns the thread's root ts.
func (e *env) startSession(verb, task string) string {
	e.t.Helper()
	before := len(e.rootMessages())
	e.slash(testUser, testChannel, verb+" "+task)
	var root string
	e.waitFor("the root message", func() bool {
		roots := e.rootMessages()
		if len(roots) > before {
			root = roots[len(roots)-1].TS
			return true
		}
		return false
	})
	return root
}

func (e *env) rootMessages() []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range e.slack.Messages(testChannel) {
		if m.ThreadTS == "" && m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// botMessages returns the bot's messages in a thread whose blocks contain marker.
func (e *env) botMessages(thread, marker string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range e.slack.Thread(testChannel, thread) {
		if m.BotID != "" && m.TS != thread && (strings.Contains(string(m.Blocks), marker) || strings.Contains(m.Text, marker)) {
			out = append(out, m)
		}
	}
	return out
}

// waitMessage waits for the n-th (1-based) bot message in thread carrying marker.
func (e *env) waitMessage(thread, marker string, n int) fakeslack.Message {
	e.t.Helper()
	var m fakeslack.Message
	e.waitFor("message #"+itoa(n)+" with "+marker, func() bool {
		ms := e.botMessages(thread, marker)
		if len(ms) >= n {
			m = ms[n-1]
			return true
		}
		return false
	})
	return m
}

// checklist returns the thread's one checklist message.
func (e *env) checklist(thread string) fakeslack.Message {
	e.t.Helper()
	ms := e.botMessages(thread, "h9_cl_title")
	if len(ms) != 1 {
		e.t.Fatalf("thread %s has %d checklist messages, want 1", thread, len(ms))
	}
	return ms[0]
}

// waitChecklist waits until the checklist's text contains every part.
func (e *env) waitChecklist(thread string, parts ...string) fakeslack.Message {
	e.t.Helper()
	var m fakeslack.Message
	e.waitFor("checklist showing "+strings.Join(parts, ", "), func() bool {
		ms := e.botMessages(thread, "h9_cl_title")
		if len(ms) != 1 {
			return false
		}
		m = ms[0]
		for _, p := range parts {
			if !strings.Contains(m.Text, p) && !strings.Contains(string(m.Blocks), p) {
				return false
			}
		}
		return true
	})
	return m
}

func (e *env) click(user, ts, action string) {
	e.t.Helper()
	if _, err := e.slack.ClickButton(e.ctx, user, testChannel, ts, action); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) reply(user, thread, text string) string {
	e.t.Helper()
	ts, err := e.slack.PostUserMessage(e.ctx, user, testChannel, thread, text)
	if err != nil {
		e.t.Fatal(err)
	}
	return ts
}

// waitEphemeral waits for an ephemeral to user containing s.
func (e *env) waitEphemeral(channel, user, s string) {
	e.t.Helper()
	e.waitFor("ephemeral to "+user+": "+s, func() bool {
		for _, m := range e.slack.Ephemerals(channel, user) {
			if strings.Contains(m.Text, s) || strings.Contains(string(m.Blocks), s) {
				return true
			}
		}
		return false
	})
}

// checkPayloads checks every message the bot sent against Slack's limits,
// through the fake's checker and render.CheckLimits.
func (e *env) checkPayloads() {
	t := e.t
	for _, v := range e.slack.Violations() {
		t.Errorf("fakeslack violation: %s", v)
	}
	for _, method := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral"} {
		for _, c := range e.slack.Calls(method) {
			m := render.Message{Text: c.Params["text"]}
			if raw := c.Params["blocks"]; raw != "" {
				var bs slack.Blocks
				if err := json.Unmarshal([]byte(raw), &bs); err != nil {
					t.Errorf("%s: blocks do not decode: %v", method, err)
					continue
				}
				m.Blocks = bs.BlockSet
			}
			if err := render.CheckLimits(m); err != nil {
				t.Errorf("%s payload breaks a limit: %v", method, err)
			}
		}
	}
}

// todos is todo_write arguments for id:status pairs.
var todos = fakemodel.TodoArgs

// worked is one model reply that does real work (writes a file) and then
// writes the todos: the work rule lets its completions through.
func worked(pairs ...string) fakemodel.Reply {
	return fakemodel.ToolCalls(fakemodel.C("write_file", `{"path":"work.txt","content":"done"}`), fakemodel.C("todo_write", todos(pairs...)))
}

// planReplies is a plan-mode run that writes the given todos and stops.
func planReplies(summary string, pairs ...string) []fakemodel.Reply {
	return []fakemodel.Reply{fakemodel.ToolCall("todo_write", todos(pairs...)), fakemodel.Text(summary)}
}

func itoa(n int) string { return strconv.Itoa(n) }

// lastUserMessage is the last user message of the i-th model request
// (negative i counts from the end).
func (e *env) lastUserMessage(i int) string {
	reqs := e.model.Requests()
	if i < 0 {
		i += len(reqs)
	}
	if i < 0 || i >= len(reqs) {
		return ""
	}
	msgs := reqs[i].Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == "user" {
			return msgs[j].Content
		}
	}
	return ""
}

// blocksText is a message's blocks as JSON without HTML escaping, for
// searching labels such as "Approve & auto-run".
func blocksText(m fakeslack.Message) string {
	return strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(string(m.Blocks))
}

// clickValue clicks with an explicit value, as a stale or forged button would.
func (e *env) clickValue(user, ts, action, blockID string, v render.ButtonValue) {
	e.t.Helper()
	_, err := e.slack.Click(e.ctx, fakeslack.Click{UserID: user, ChannelID: testChannel, MessageTS: ts,
		ActionID: action, BlockID: blockID, Value: v.Encode()})
	if err != nil {
		e.t.Fatal(err)
	}
}

// planned starts "/h9 plan <task>" with a model that writes the given id:status
// todos and the summary "Plan.", and waits for the plan review.
func (e *env) planned(task string, pairs ...string) (thread string, review fakeslack.Message) {
	e.t.Helper()
	e.model.Enqueue(planReplies("Plan.", pairs...)...)
	thread = e.startSession("plan", task)
	return thread, e.waitMessage(thread, render.ActionApproveAuto, 1)
}

package bot

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/h9test"
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
	fakes  *h9test.Fakes // the fake Slack and model; slack, model and ctx are its
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
	// modelTries, when set, is the agent's MaxRetries (tries of a model
	// request in a row); 1 otherwise.
	modelTries int
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
	fakes := h9test.New(t, h9test.Options{Slack: fakeslack.Options{EchoBotMessages: true, EchoEdits: true}, Channel: testChannel})
	db := h9test.OpenBolt(t, dir)
	e := &env{
		t: t, fakes: fakes, ctx: fakes.Ctx, slack: fakes.Slack, model: fakes.Model,
		db: db, wsRoot: filepath.Join(dir, "workspaces"), cfgFn: cfgFn,
	}
	t.Cleanup(func() {
		if e.stop != nil {
			e.stop()
		}
		e.fakes.CheckPayloads()
		db.Close()
	})
	return e
}

// openStore builds the store on db, as h9 does at each start.
func openStore(tb testing.TB, db *bolt.DB) *boltstore.Store {
	tb.Helper()
	return h9test.BoltStore(tb, db)
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
		Workspaces: ws, MaxRetries: max(1, e.modelTries), RetryBaseDelay: time.Millisecond, Logger: logger,
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
	e.fakes.WaitConnected()
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
	e.fakes.WaitFor(what, cond)
}

func (e *env) slash(user, channel, text string) fakeslack.Ack {
	e.t.Helper()
	return e.fakes.Slash(user, channel, text)
}

// startSession runs "/h9 <verb> <task>" and returns the thread's root ts.
func (e *env) startSession(verb, task string) string {
	e.t.Helper()
	return e.fakes.StartThread(testUser, verb+" "+task)
}

func (e *env) rootMessages() []fakeslack.Message { return e.fakes.Roots() }

// botMessages returns the bot's messages in a thread whose blocks contain marker.
func (e *env) botMessages(thread, marker string) []fakeslack.Message {
	return e.fakes.BotMessages(thread, marker)
}

// waitMessage waits for the n-th (1-based) bot message in thread carrying marker.
func (e *env) waitMessage(thread, marker string, n int) fakeslack.Message {
	e.t.Helper()
	return e.fakes.WaitMessage(thread, marker, n)
}

// checklist returns the thread's one checklist message.
func (e *env) checklist(thread string) fakeslack.Message {
	e.t.Helper()
	return e.fakes.Checklist(thread)
}

// waitChecklist waits until the checklist's text contains every part.
func (e *env) waitChecklist(thread string, parts ...string) fakeslack.Message {
	e.t.Helper()
	return e.fakes.WaitChecklist(thread, parts...)
}

func (e *env) click(user, ts, action string) { e.t.Helper(); e.fakes.Click(user, ts, action) }

func (e *env) reply(user, thread, text string) string {
	e.t.Helper()
	return e.fakes.Reply(user, thread, text)
}

// waitEphemeral waits for an ephemeral to user containing s.
func (e *env) waitEphemeral(channel, user, s string) {
	e.t.Helper()
	e.fakes.WaitEphemeral(channel, user, s)
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

package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store/boltstore"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/testenv"
	goopenai "github.com/sashabaranov/go-openai"
	bolt "go.etcd.io/bbolt"
)

// harness is an engine wired to a fake model over HTTP, a real bbolt file
// behind the real store, and real workspaces (unsandboxed, so tests run
// anywhere). Like the bot, it owns each session's mode (setMode) and
// passes it with every run.
type harness struct {
	t      testing.TB
	srv    *fakemodel.Server
	dbPath string
	db     *bolt.DB
	store  *boltstore.Store
	wsm    *workspace.Manager
	cfg    Config
	eng    *Engine
	modes  map[string]planning.PlanMode
}

func newHarness(t testing.TB, tune ...func(*Config)) *harness {
	t.Helper()
	return newHarnessSandbox(t, "none", tune...)
}

// newHarnessSandbox is newHarness with a chosen workspace sandbox setting.
// A sandbox other than "none" belongs to the full run (testenv).
func newHarnessSandbox(t testing.TB, sandbox string, tune ...func(*Config)) *harness {
	t.Helper()
	switch sandbox {
	case "none":
	case "bwrap":
		testenv.Need(t, "bwrap")
	case "landlock":
		testenv.Need(t, "landlock:1")
	default: // auto: whichever the machine has
		testenv.Full(t, "runs in the machine's sandbox")
	}
	dir := t.TempDir()
	h := &harness{t: t, srv: fakemodel.New(), dbPath: filepath.Join(dir, "h9.db"), modes: map[string]planning.PlanMode{}}
	t.Cleanup(h.srv.Close)
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(dir, "workspaces"), Sandbox: sandbox})
	if err != nil {
		t.Fatal(err)
	}
	h.wsm = wsm
	h.cfg = Config{
		Model:          newTestModel(t, h.srv.URL(), "test-key"),
		ModelName:      "fake-model",
		Workspaces:     wsm,
		RetryBaseDelay: time.Millisecond,
		SkillsDir:      filepath.Join(dir, "skills"),
	}
	for _, f := range tune {
		f(&h.cfg)
	}
	h.open()
	return h
}

// newTestModel is a streaming model (h9's default) for the endpoint at url.
func newTestModel(t testing.TB, url, key string) *openai.Client {
	t.Helper()
	m, err := openai.New(openai.Config{BaseURL: url, APIKey: key, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// open (re)opens the DB file and builds a fresh Engine on it.
func (h *harness) open() {
	h.t.Helper()
	db, err := bolt.Open(h.dbPath, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	h.db = db
	h.t.Cleanup(func() { db.Close() })
	if h.store, err = boltstore.New(db); err != nil {
		h.t.Fatal(err)
	}
	h.cfg.Store = h.store
	if h.eng, err = New(h.cfg); err != nil {
		h.t.Fatal(err)
	}
}

// moveDB switches to a fresh DB file in dir (benchmarks on tmpfs).
func (h *harness) moveDB(dir string) {
	h.t.Helper()
	if err := h.db.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.dbPath = filepath.Join(dir, "h9.db")
	h.open()
}

// reopen simulates a restart: close the DB, open it again, new Engine.
func (h *harness) reopen() {
	h.t.Helper()
	if err := h.db.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.open()
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) kinds() []EventKind {
	var ks []EventKind
	for _, ev := range r.all() {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func (r *recorder) of(k EventKind) []Event {
	var out []Event
	for _, ev := range r.all() {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// task is the request that starts on text.
func task(text string) Request { return Request{Intent: IntentTask, Text: text} }

// run runs one task in the session's mode (unless opts names one) and
// returns the result, events and error.
func (h *harness) run(session, text string, opts RunOptions) (Result, *recorder, error) {
	h.t.Helper()
	return h.runRequest(session, task(text), opts)
}

func (h *harness) runRequest(session string, req Request, opts RunOptions) (Result, *recorder, error) {
	h.t.Helper()
	rec := &recorder{}
	opts.Events = rec.add
	if m, ok := h.modes[session]; ok && opts.Mode == planning.PlanModeDefault {
		opts.Mode = m
	}
	res, err := h.eng.Run(context.Background(), session, req, opts)
	return res, rec, err
}

// mustRun is run that fails the test on error.
func (h *harness) mustRun(session, text string) (Result, *recorder) {
	h.t.Helper()
	return h.mustRunRequest(session, task(text))
}

func (h *harness) mustRunRequest(session string, req Request) (Result, *recorder) {
	h.t.Helper()
	res, rec, err := h.runRequest(session, req, RunOptions{})
	if err != nil {
		h.t.Fatalf("Run: %v (events %v)", err, rec.kinds())
	}
	return res, rec
}

// setMode sets the mode the session's next runs use.
func (h *harness) setMode(session string, m planning.PlanMode) { h.modes[session] = m }

func (h *harness) wsDir(session string) string {
	h.t.Helper()
	ws, err := h.wsm.Open(session)
	if err != nil {
		h.t.Fatal(err)
	}
	defer ws.Close()
	return ws.Dir()
}

// toolMessages returns the tool results of the conversation sent in req.
func toolMessages(req goopenai.ChatCompletionRequest) []goopenai.ChatCompletionMessage {
	var out []goopenai.ChatCompletionMessage
	for _, m := range req.Messages {
		if m.Role == goopenai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

// lastRequest is the last chat request the fake model received.
func (h *harness) lastRequest() goopenai.ChatCompletionRequest {
	h.t.Helper()
	reqs := h.srv.Requests()
	if len(reqs) == 0 {
		h.t.Fatal("no model request")
	}
	return reqs[len(reqs)-1]
}

func toolNames(req goopenai.ChatCompletionRequest) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	slices.Sort(names)
	return names
}

// todoArgs renders todo_write arguments for a full replace.
func todoArgs(items ...planning.TodoItem) string {
	data, err := json.Marshal(map[string]any{"todos": items})
	if err != nil {
		panic(err)
	}
	return string(data)
}

func todo(id, content string, st planning.TodoStatus) planning.TodoItem {
	return planning.TodoItem{ID: id, Content: content, Status: st}
}

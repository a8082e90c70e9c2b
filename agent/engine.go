// Package agent runs h9's coding agent: the ReAct loop over an
// OpenAI-compatible chat endpoint, plan mode, the tools confined to a
// session's workspace, compaction, and per-session persistence through
// its Store. It reports what happens through events and knows nothing of
// Slack.
package agent

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
	"github.com/h9-app/h9/workspace"
)

// Defaults for zero Config fields.
const (
	DefaultMaxSteps      = 50
	DefaultContextWindow = 128000
	DefaultMaxRetries    = 4
)

// Config holds the engine's dependencies and limits.
type Config struct {
	Store          Store              // required
	Model          Model              // required; an *openai.Client bounds each try with its idle timeout
	ModelName      string             // required
	Workspaces     *workspace.Manager // required
	SkillsDir      string             // optional global skills ($H9_SKILLS_DIR)
	MaxSteps       int                // model calls per run; 0 = 50
	ContextWindow  int                // tokens; 0 = 128000; compaction at 80%
	MaxRetries     int                // tries per model request in total; 0 = 4
	RetryBaseDelay time.Duration      // first backoff before jitter; 0 = 500ms
	Logger         *slog.Logger       // nil = discard
	Metrics        Metrics            // nil = counts nothing
	// Vision is whether shared images go to the model as image parts:
	// VisionAuto ("" too) until the endpoint refuses them, VisionOn, VisionOff.
	Vision Vision
	Tools  ToolSource // external tools (MCP); nil = the built-in ones only
}

// Engine runs sessions. It is safe for concurrent use: different sessions
// run in parallel; one session runs one Run at a time.
type Engine struct {
	cfg       Config
	store     Store
	model     Model // cfg.Model behind retries
	compactor compactor
	log       *slog.Logger
	metrics   Metrics
	// window is the context window in force: the configured one, or less
	// once an endpoint has said that a prompt did not fit (learnWindow).
	window atomic.Int64

	mu   sync.Mutex
	live map[string]*liveSession // sessions with a Run in progress

	// noImages: under VisionAuto the endpoint refused image parts; none
	// is sent again for the life of the process.
	noImages atomic.Bool
}

// liveSession is the state of a running session that other calls may need.
// todos is set before loaded is closed; nil then means its load failed.
type liveSession struct {
	loaded chan struct{}
	todos  *planning.TodoStore
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: Store is required", ErrInvalidConfig)
	case cfg.Model == nil:
		return nil, fmt.Errorf("%w: Model is required", ErrInvalidConfig)
	case cfg.ModelName == "":
		return nil, fmt.Errorf("%w: ModelName is required", ErrInvalidConfig)
	case cfg.Workspaces == nil:
		return nil, fmt.Errorf("%w: Workspaces is required", ErrInvalidConfig)
	case cfg.MaxSteps < 0 || cfg.ContextWindow < 0 || cfg.MaxRetries < 0 || cfg.RetryBaseDelay < 0:
		return nil, fmt.Errorf("%w: limits must not be negative", ErrInvalidConfig)
	}
	cfg.MaxSteps = cmp.Or(cfg.MaxSteps, DefaultMaxSteps)
	cfg.ContextWindow = cmp.Or(cfg.ContextWindow, DefaultContextWindow)
	cfg.MaxRetries = cmp.Or(cfg.MaxRetries, DefaultMaxRetries)
	cfg.RetryBaseDelay = cmp.Or(cfg.RetryBaseDelay, openai.DefaultRetryBase)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	e := &Engine{
		cfg:     cfg,
		store:   timedStore{cfg.Store},
		model:   openai.WithRetries(cfg.Model, cfg.MaxRetries, cfg.RetryBaseDelay, cfg.Metrics),
		log:     cfg.Logger,
		metrics: cfg.Metrics,
		live:    map[string]*liveSession{},
	}
	e.compactor = compactor{model: e.model, modelName: cfg.ModelName}
	e.window.Store(int64(cfg.ContextWindow))
	return e, nil
}

// contextWindow is the context window compaction aims at.
func (e *Engine) contextWindow() int { return int(e.window.Load()) }

// learnWindow lowers the context window to what an endpoint said it is;
// it never raises it.
func (e *Engine) learnWindow(tokens int) {
	for {
		cur := e.window.Load()
		if tokens <= 0 || int64(tokens) >= cur || e.window.CompareAndSwap(cur, int64(tokens)) {
			return
		}
	}
}

// SandboxLevel is the sandbox actually in force for bash.
func (e *Engine) SandboxLevel() workspace.Level { return e.cfg.Workspaces.Level() }

// Todos returns the session's todo list: the live one while a Run is in
// progress, else the stored one.
func (e *Engine) Todos(ctx context.Context, sessionID string) ([]planning.TodoItem, error) {
	e.mu.Lock()
	ls := e.live[sessionID]
	e.mu.Unlock()
	if t := ls.loadedTodos(); t != nil {
		return t.Read(), nil
	}
	items, err := e.store.Todos(ctx, sessionID)
	return items, storeError(err)
}

// Snapshot is a session as its latest commit left it: what a checklist,
// a status line or a budget shows about it.
type Snapshot struct {
	Todos []planning.TodoItem
	// Evidence is what h9 saw done for each completed todo, by id.
	Evidence map[string]planning.Evidence
	// Total counts the session's tokens over all its runs.
	Total Usage
}

// Snapshot reads a session's todos, their evidence and its token total
// from the store (a run in progress commits them with every step).
func (e *Engine) Snapshot(ctx context.Context, sessionID string) (Snapshot, error) {
	sess, err := e.store.LoadSession(ctx, sessionID)
	if err != nil {
		return Snapshot{}, storeError(err)
	}
	st, err := decodeState(sess.State)
	if err != nil {
		return Snapshot{}, fmt.Errorf("loading session %s: %w", sessionID, err)
	}
	return Snapshot{Todos: sess.Todos, Evidence: st.Work.Evidence(), Total: st.Total}, nil
}

// CancelOpenTodos marks every pending and in_progress todo cancelled (the
// Cancel button) and returns the new list. While a Run is in progress the
// live list is changed too, so the run's final save keeps the cancellation;
// the caller should cancel that run's context first.
func (e *Engine) CancelOpenTodos(ctx context.Context, sessionID string) ([]planning.TodoItem, error) {
	if e.cfg.Tools != nil {
		e.cfg.Tools.EndSession(sessionID) // a cancelled session's stdio servers go with its commands
	}
	e.mu.Lock()
	defer e.mu.Unlock() // held over one store write, never over a model call
	var items []planning.TodoItem
	live := e.live[sessionID].loadedTodos() // a load never needs e.mu
	if live != nil {
		items = live.Read()
	} else {
		var err error
		if items, err = e.store.Todos(ctx, sessionID); err != nil {
			return nil, storeError(err)
		}
	}
	for i := range items {
		if items[i].Status.Active() {
			items[i].Status = planning.TodoCancelled
		}
	}
	if live != nil {
		live.Write(items)
	}
	return items, storeError(e.store.SaveTodos(ctx, sessionID, items))
}

// acquire marks the session running, or fails with ErrBusy, and returns
// what the store holds for it, with its todos in a live store. The load
// happens outside e.mu, so a burst of run starts does not queue behind one
// another's reads; other calls that find the session live wait for it
// (loadedTodos).
func (e *Engine) acquire(ctx context.Context, sessionID string) (store.AgentSession, *planning.TodoStore, error) {
	ls := &liveSession{loaded: make(chan struct{})}
	e.mu.Lock()
	if _, busy := e.live[sessionID]; busy {
		e.mu.Unlock()
		return store.AgentSession{}, nil, fmt.Errorf("%w: %s", ErrBusy, sessionID)
	}
	e.live[sessionID] = ls
	e.mu.Unlock()
	sess, err := e.store.LoadSession(ctx, sessionID)
	if err == nil {
		ls.todos = planning.NewTodoStore(sess.Todos...)
	}
	close(ls.loaded)
	if err != nil {
		e.release(sessionID)
		return store.AgentSession{}, nil, storeError(err)
	}
	return sess, ls.todos, nil
}

// loadedTodos waits for a live session's load and returns its todo store;
// nil when ls is nil (no run in progress) or its load failed.
func (ls *liveSession) loadedTodos() *planning.TodoStore {
	if ls == nil {
		return nil
	}
	<-ls.loaded
	return ls.todos
}

func (e *Engine) release(sessionID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, sessionID)
}

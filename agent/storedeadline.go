package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// storeCallTimeout bounds each of the engine's store calls. The database
// going away for up to a minute fails nothing that can wait
// (ARCHITECTURE.md, "Lifetimes and deadlines"): the PostgreSQL store sends
// a call again on a fresh connection until its context ends, so a step
// commit waits this long for the database to come back before the run
// fails with ErrStore. A minute, plus the time a restarted server takes to
// accept connections again on a loaded machine.
const storeCallTimeout = 75 * time.Second

// timedStore gives every call of the Store it wraps a deadline derived
// from the caller's context.
type timedStore struct{ s Store }

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, storeCallTimeout)
}

func (t timedStore) LoadSession(ctx context.Context, id string) (store.AgentSession, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.LoadSession(ctx, id)
}

func (t timedStore) AppendStep(ctx context.Context, id string, st store.Step) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.AppendStep(ctx, id, st)
}

func (t timedStore) ReplaceHistory(ctx context.Context, id string, msgs []json.RawMessage, state json.RawMessage) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.ReplaceHistory(ctx, id, msgs, state)
}

func (t timedStore) Todos(ctx context.Context, id string) ([]planning.TodoItem, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.Todos(ctx, id)
}

func (t timedStore) SaveTodos(ctx context.Context, id string, items []planning.TodoItem) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return t.s.SaveTodos(ctx, id, items)
}

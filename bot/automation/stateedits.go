package automation

import (
	"context"
	"errors"
	"sync"

	"github.com/h9-app/h9/agent/store"
)

// An automation's state is one record that every start, failure and
// watermark of that automation edits. At a busy webhook's rate (hundreds
// a second) compare-and-swap edits made side by side mostly lose to each
// other, and each loss costs a read and a commit more. So the edits of
// one automation in this process are applied one batch at a time: the
// edits that arrive while a batch is being saved wait and are saved
// together next, in one read and one write. Across replicas the store's
// versions still decide, and a batch that loses is applied again.

// stateEdits coalesces the edits of each automation's state.
type stateEdits struct {
	mu    sync.Mutex
	names map[string]*nameEdits
}

// nameEdits is one automation's: save is held by the batch being saved,
// next gathers the edits that wait for it.
type nameEdits struct {
	save sync.Mutex
	next *editBatch
}

// editBatch is edits saved in one write; done is closed once st and err
// are set.
type editBatch struct {
	edits []func(*store.AutomationState)
	done  chan struct{}
	st    store.AutomationState
	err   error
}

// editState applies edit to the stored state of name, in a batch with
// the edits of name made meanwhile, and returns the state as saved. An
// edit may run more than once (when a write conflicts with another
// replica's); the edits of one batch run in the order they were made.
func (e *Engine) editState(ctx context.Context, name string, edit func(*store.AutomationState)) (store.AutomationState, error) {
	se := &e.edits
	se.mu.Lock()
	if se.names == nil {
		se.names = map[string]*nameEdits{}
	}
	ne := se.names[name]
	if ne == nil {
		ne = &nameEdits{}
		se.names[name] = ne
	}
	b, lead := ne.next, false
	if b == nil {
		b, lead = &editBatch{done: make(chan struct{})}, true
		ne.next = b
	}
	b.edits = append(b.edits, edit)
	se.mu.Unlock()
	if !lead {
		select {
		case <-b.done:
			return b.st, b.err
		case <-ctx.Done():
			return store.AutomationState{}, ctx.Err()
		}
	}
	ne.save.Lock()
	se.mu.Lock()
	ne.next = nil // later edits gather in the next batch
	edits := b.edits
	se.mu.Unlock()
	b.st, b.err = e.saveState(ctx, name, edits)
	ne.save.Unlock()
	close(b.done)
	return b.st, b.err
}

// saveState applies edits to the stored state, again on a conflict with
// another writer.
func (e *Engine) saveState(ctx context.Context, name string, edits []func(*store.AutomationState)) (store.AutomationState, error) {
	var err error
	for range 5 {
		var st store.AutomationState
		if st, err = e.state(ctx, name); err != nil {
			break
		}
		for _, edit := range edits {
			edit(&st)
		}
		cctx, cancel := e.ctx(ctx)
		st, err = e.o.Store.PutAutomationState(cctx, st)
		cancel()
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	e.o.Log.Warn("saving an automation's state failed", "automation", name, "err", err)
	return store.AutomationState{}, err
}

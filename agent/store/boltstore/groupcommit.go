package boltstore

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// maxBatch bounds the writers sharing one transaction, keeping it short.
const maxBatch = 128

// group shares bbolt write transactions between concurrent writers: while
// one commit (two fsyncs) is in flight, the writers that arrive meanwhile
// wait and then commit together in the next transaction. A lone writer
// commits at once, so nothing waits for a timer (unlike bolt.DB.Batch and
// its MaxBatchDelay). Durability is unchanged: update returns only after
// the caller's writes are committed and synced. The Store has one group,
// so the agent's and the bot's writes share commits.
type group struct {
	db    *bolt.DB
	mu    sync.Mutex
	queue []*call
	busy  bool // a leader is committing; new calls queue up
}

type call struct {
	fn   func(*bolt.Tx) error
	err  error
	done chan struct{} // closed once err is set
	lead chan struct{} // closed when this call is to commit the queue
}

// update is db.Update shared with concurrent callers. fn must only touch
// the transaction: it may run a second time, in a transaction of its own,
// when the shared one fails, so that only the failing caller gets an
// error. A panic in fn is returned as an error to its caller.
func (g *group) update(fn func(*bolt.Tx) error) error {
	c := &call{fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.busy {
		g.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-c.lead:
		}
	} else {
		g.busy = true
		g.mu.Unlock()
	}
	g.lead()
	<-c.done // committed by this leader or an earlier one
	return c.err
}

// lead commits one batch from the queue, then hands leadership to the
// oldest waiting call, or ends the busy period.
func (g *group) lead() {
	g.mu.Lock()
	n := min(len(g.queue), maxBatch)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	g.commit(batch)
	clear(batch) // the queue's old slots: let the calls (and what they wrote) go
	g.mu.Lock()
	if len(g.queue) > 0 {
		close(g.queue[0].lead)
	} else {
		g.busy = false
	}
	g.mu.Unlock()
}

// commit runs the batch in one transaction; if that fails, each call runs
// alone so that errors reach only their own callers. A call that refuses
// before writing anything (refuse) fails alone and the others commit.
func (g *group) commit(batch []*call) {
	refused := make([]error, len(batch))
	err := g.db.Update(func(tx *bolt.Tx) error {
		for i, c := range batch {
			refused[i] = nil // set anew if bbolt runs this again
			if err := safe(c.fn, tx); err != nil {
				if r, ok := errors.AsType[refusal](err); ok {
					refused[i] = r.err
					continue
				}
				return err
			}
		}
		return nil
	})
	for i, c := range batch {
		switch {
		case err != nil && len(batch) > 1:
			c.err = unrefused(g.db.Update(func(tx *bolt.Tx) error { return safe(c.fn, tx) }))
		case err != nil:
			c.err = unrefused(err)
		default:
			c.err = refused[i]
		}
		close(c.done)
	}
}

// refusal is a transaction function's error returned before it wrote
// anything (a compare-and-swap that lost): it fails its own caller only,
// so that a conflict does not cost the batch's other writers a commit
// each.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refuse marks err as returned before fn wrote anything.
func refuse(err error) error { return refusal{err} }

func unrefused(err error) error {
	if r, ok := errors.AsType[refusal](err); ok {
		return r.err
	}
	return err
}

var errPanic = errors.New("transaction function panicked")

func safe(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errPanic, p)
		}
	}()
	return fn(tx)
}

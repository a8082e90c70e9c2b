package bot

import (
	"sync"
)

// tasks owns goroutines: each is counted before it starts and wait returns
// once every one has ended, so shutdown knows when nothing of the bot can
// touch the store any more. After wait has begun and every task ended,
// spawn refuses (the store may be closing); until then a task may start
// others (a run's final edit, a checklist's flush).
type tasks struct {
	mu      sync.Mutex
	running int
	closed  bool
	idle    chan struct{} // closed when closed and running reaches 0
}

func newTasks() *tasks { return &tasks{idle: make(chan struct{})} }

// spawn runs f on a goroutine of its own, owned by t. It reports false,
// and runs nothing, once t has drained.
func (t *tasks) spawn(f func()) bool {
	t.mu.Lock()
	if t.closed && t.running == 0 {
		t.mu.Unlock()
		return false
	}
	t.running++
	t.mu.Unlock()
	go func() {
		defer t.done()
		f()
	}()
	return true
}

func (t *tasks) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running--
	if t.closed && t.running == 0 {
		close(t.idle)
	}
}

// drained closes t (if it is not yet) and returns a channel closed once
// no task runs.
func (t *tasks) drained() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		if t.running == 0 {
			close(t.idle)
		}
	}
	return t.idle
}

// count is how many tasks run now.
func (t *tasks) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running
}

// workQueue is the work commands, clicks' refusals and Home tabs do after
// their envelope's ack, done by a fixed set of workers in arrival order.
// Work is admitted (given a place in the queue) before any goroutine does
// it, so a slow store or Slack grows the queue, never the goroutines; a
// full queue makes its producer (the socket loop or the claimer) wait,
// which is Slack's cue to hold back.
type workQueue struct {
	mu     sync.RWMutex
	ch     chan func()
	closed bool
}

func newWorkQueue(size int) *workQueue { return &workQueue{ch: make(chan func(), size)} }

// start runs n workers, owned by t, until close.
func (q *workQueue) start(t *tasks, n int) {
	for range n {
		t.spawn(func() {
			for f := range q.ch {
				f()
			}
		})
	}
}

// add queues f; it reports false (and drops f) once the queue is closed.
func (q *workQueue) add(f func()) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return false
	}
	q.ch <- f
	return true
}

// close lets the workers finish what is queued, then end.
func (q *workQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
}

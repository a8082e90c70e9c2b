package follow

import (
	"context"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// Poller knows the followed requests this replica holds (every save and
// load of a session tells it: Note) and, when one is due, knocks on its
// session, whose holder reads the request under the session's lease: in a
// fleet only the lease's holder reads a request. A restart learns the
// followed sessions from the store's active set (a followed session is
// active). K names a session; its String spreads the overdue ones.
type Poller[K interface {
	comparable
	String() string
}] struct {
	every time.Duration
	knock func(K) bool // delivers a knock; false: h9 is stopping, knock no more
	mu    sync.Mutex
	due   map[K]time.Time
	wake  chan struct{}

	requests, cached atomic.Int64 // forge API requests of polls, and of them 304s
}

// NewPoller is a poller for requests read every period, knocking with knock.
func NewPoller[K interface {
	comparable
	String() string
}](every time.Duration, knock func(K) bool) *Poller[K] {
	return &Poller[K]{every: every, knock: knock, due: map[K]time.Time{}, wake: make(chan struct{}, 1)}
}

// Note records key's followed request as it now is.
func (p *Poller[K]) Note(key K, f *Follow) {
	p.mu.Lock()
	_, had := p.due[key]
	switch now := time.Now(); {
	case f.Following() && !had && f.NextPoll.Before(now):
		// Overdue when this replica took it (a start, a takeover): the
		// requests found so are read spread over one poll, not at once.
		p.due[key] = now.Add(spread(key.String(), p.every))
	case f.Following():
		p.due[key] = f.NextPoll
	default:
		delete(p.due, key)
	}
	p.mu.Unlock()
	if f.Following() || had {
		p.signal()
	}
}

// spread is a session's own offset within a poll period.
func spread(name string, every time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(max(every, 1)))
}

// Forget drops key: its holder retires or lost its lease.
func (p *Poller[K]) Forget(key K) {
	p.mu.Lock()
	delete(p.due, key)
	p.mu.Unlock()
}

func (p *Poller[K]) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Counted adds a poll's requests to the totals (Requests).
func (p *Poller[K]) Counted(up forge.Update) {
	p.requests.Add(int64(up.Requests))
	p.cached.Add(int64(up.Cached))
}

// Requests reports the forge API requests the polls made, and how many
// of them were answered 304 Not Modified.
func (p *Poller[K]) Requests() (requests, cached int64) {
	return p.requests.Load(), p.cached.Load()
}

// maxSleep bounds a sleep of the poller, so that a clock jump or a
// missed note costs at most this.
const maxSleep = time.Minute

// Run knocks on each due session until ctx ends.
func (p *Poller[K]) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-t.C:
		}
		t.Reset(p.knockDue(time.Now()))
	}
}

// knockDue knocks on every session due at now and returns how long to
// sleep until the next is due. A knocked session counts as due again one
// poll later, whatever its holder does (another replica may hold it).
func (p *Poller[K]) knockDue(now time.Time) time.Duration {
	p.mu.Lock()
	var ready []K
	next := now.Add(maxSleep)
	for k, at := range p.due {
		if !at.After(now) {
			ready = append(ready, k)
			at = now.Add(p.every)
			p.due[k] = at
		}
		if at.Before(next) {
			next = at
		}
	}
	p.mu.Unlock()
	for _, k := range ready {
		if !p.knock(k) {
			break
		}
	}
	return max(next.Sub(now), 0)
}

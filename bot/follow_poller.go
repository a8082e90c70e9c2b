package bot

import (
	"context"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/workspace/forge"
)

// poller knows the followed requests this replica has seen (every save
// and load of a session tells it) and, when one is due, hands it to its
// session's actor, which reads the request under the session's lease:
// in a fleet only the lease's holder reads a request, and a replica that
// holds nothing only knocks. A restart learns the followed sessions from
// the store's active set (a followed session is active).
type poller struct {
	b    *Bot
	mu   sync.Mutex
	due  map[threadKey]time.Time
	wake chan struct{}

	requests, cached atomic.Int64 // forge API requests of polls, and of them 304s
}

func newPoller(b *Bot) *poller {
	return &poller{b: b, due: map[threadKey]time.Time{}, wake: make(chan struct{}, 1)}
}

// note records the session's followed request as it now is.
func (p *poller) note(key threadKey, f *Follow) {
	if p == nil {
		return
	}
	p.mu.Lock()
	_, had := p.due[key]
	switch now := time.Now(); {
	case f.following() && !had && f.NextPoll.Before(now):
		// Overdue when this replica took it (a start, a takeover): the
		// requests found so are read spread over one poll, not at once.
		p.due[key] = now.Add(spread(key, p.b.cfg.ForgePoll))
	case f.following():
		p.due[key] = f.NextPoll
	default:
		delete(p.due, key)
	}
	p.mu.Unlock()
	if f.following() || had {
		p.signal()
	}
}

// spread is the session's own offset within a poll period.
func spread(key threadKey, every time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(key.channel + "/" + key.ts))
	return time.Duration(h.Sum64() % uint64(max(every, 1)))
}

// forget drops the session: its actor retires or lost its lease.
func (p *poller) forget(key threadKey) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.due, key)
	p.mu.Unlock()
}

func (p *poller) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// counted adds a poll's requests to the totals (ForgeRequests).
func (p *poller) counted(up forge.Update) {
	p.requests.Add(int64(up.Requests))
	p.cached.Add(int64(up.Cached))
}

// maxPollerSleep bounds a sleep of the poller, so that a clock jump or
// a missed note costs at most this.
const maxPollerSleep = time.Minute

// run knocks on each due session until ctx ends.
func (p *poller) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-t.C:
		}
		t.Reset(p.knock(time.Now()))
	}
}

// knock delivers a poll to every due session and returns how long to
// sleep until the next is due. A knocked session counts as due again
// one poll later, whatever its actor does (another replica may hold it).
func (p *poller) knock(now time.Time) time.Duration {
	p.mu.Lock()
	var ready []threadKey
	next := now.Add(maxPollerSleep)
	for k, at := range p.due {
		if !at.After(now) {
			ready = append(ready, k)
			at = now.Add(p.b.cfg.ForgePoll)
			p.due[k] = at
		}
		if at.Before(next) {
			next = at
		}
	}
	p.mu.Unlock()
	for _, k := range ready {
		if p.b.stopping.Load() {
			break
		}
		p.b.reg.deliver(k, msgFollowPoll{})
	}
	return max(next.Sub(now), 0)
}

// ForgeRequests reports the forge API requests the polls of following
// made, and how many of them were answered 304 Not Modified.
func (b *Bot) ForgeRequests() (requests, cached int64) {
	return b.follows.requests.Load(), b.follows.cached.Load()
}

package bot

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
)

// checklist is one session's checklist message with coalesced edits: at
// most one chat.update per interval, and the latest state always lands.
// Safe for concurrent use (the run's events and the actor both set it).
type checklist struct {
	ctx      context.Context // the session's: its edits stop when its lease is lost
	api      *slackapi.Client
	log      *slog.Logger
	channel  string
	thread   string
	ts       string // "" until posted: the next flush posts instead of editing
	interval time.Duration
	onIdle   func() // wakes the actor, which waits for the last edit before retiring
	onPosted func(ts string)
	tasks    *tasks // owns the flush goroutine

	// firstDone (set by postNow) is closed once the first post attempt has
	// returned, so thread replies never land above the checklist.
	firstDone chan struct{}
	firstOnce sync.Once

	// hurry cuts a flush's spacing short (flushNow); idle is closed when the
	// flush in progress ends.
	hurry chan struct{}

	mu       sync.Mutex
	cur      render.Checklist
	dirty    bool
	flushing bool
	idle     chan struct{}
	lastSent time.Time
	clock    activityClock // the Now: line's (checklist_now.go)
	shown    shown         // what the message last showed (edit_due.go)
}

// flushNowTimeout bounds how long flushNow holds the actor for a slow Slack.
const flushNowTimeout = 5 * time.Second

func (a *actor) newChecklist(ts string, first render.Checklist) *checklist {
	return &checklist{
		ctx: a.ctx, api: a.b.api, log: a.log, channel: a.rec.Channel, thread: a.rec.ThreadTS, ts: ts,
		interval: a.b.cfg.CoalesceInterval, onIdle: a.signal,
		onPosted: func(ts string) { a.push(msgChecklistPosted{ts: ts}) }, tasks: a.b.tasks,
		cur: first, lastSent: time.Now(), hurry: make(chan struct{}, 1),
	}
}

// postNow posts a new checklist at once, on the flush goroutine, so the
// caller does not wait for Slack. Call it once, before any set.
func (c *checklist) postNow() {
	c.firstDone = make(chan struct{}) // before the flush goroutine starts
	c.mu.Lock()
	c.lastSent = time.Time{} // a first post is not an edit: no spacing
	c.mu.Unlock()
	c.set(func(*render.Checklist) {})
}

// waitFirstPost returns once postNow's first post attempt has returned.
func (c *checklist) waitFirstPost() {
	if c.firstDone != nil {
		<-c.firstDone
	}
}

// set changes the checklist and schedules an edit.
func (c *checklist) set(f func(*render.Checklist)) {
	c.mu.Lock()
	f(&c.cur)
	c.dirty = true
	start := !c.flushing
	if start {
		c.idle = make(chan struct{})
	}
	c.flushing = true
	c.mu.Unlock()
	if start && !c.tasks.spawn(c.flush) {
		c.mu.Lock()
		c.flushing = false
		close(c.idle)
		c.mu.Unlock()
	}
}

// note changes the checklist without scheduling an edit: the change shows
// with the next one.
func (c *checklist) note(f func(*render.Checklist)) {
	c.mu.Lock()
	f(&c.cur)
	c.mu.Unlock()
}

// flushNow sends a pending edit now, without waiting out the spacing, and
// returns once it has landed (or after flushNowTimeout). A run's outcome (the
// review, "Done", "stalled") is posted after it, so whoever reads that
// message finds the checklist already showing the todos it speaks of.
func (c *checklist) flushNow() {
	c.mu.Lock()
	if !c.flushing {
		c.mu.Unlock()
		return
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case c.hurry <- struct{}{}:
	default:
	}
	t := time.NewTimer(flushNowTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	select { // a hurry the flush did not need must not skip a later spacing
	case <-c.hurry:
	default:
	}
}

// busy reports an edit pending or in flight.
func (c *checklist) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty || c.flushing || c.clock.tickers > 0
}

// flush sends the latest state, spacing edits by the interval, until
// nothing new arrived during the last one. It starts only when dirty.
func (c *checklist) flush() {
	c.api.Editing.Add(1)
	defer c.api.Editing.Add(-1)
	for {
		c.mu.Lock()
		wait := editSpacing(c.interval, c.api.Editing.Load(), c.api.EditBudget) - time.Since(c.lastSent)
		c.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.hurry:
				t.Stop()
			}
		}
		c.mu.Lock()
		snap := c.cur
		snap.Todos = slices.Clone(c.cur.Todos)
		snap.ActivityFor = c.activityFor()
		c.dirty = false
		c.lastSent = time.Now()
		ts := c.ts
		c.mu.Unlock()
		landed := c.send(ts, render.RenderChecklist(snap))
		c.mu.Lock()
		if landed {
			c.shown = shownOf(snap)
		}
		if !c.dirty {
			c.flushing = false
			close(c.idle)
			c.mu.Unlock()
			c.onIdle()
			return
		}
		c.mu.Unlock()
	}
}

// editsPerInterval bounds the checklist edits of all sessions together in
// one coalescing interval. Below it each checklist is edited once an
// interval; above it the spacing grows with the checklists waiting to be
// edited, so the edit load grows with the sessions running, not with
// sessions × how long their runs take (a burst of 1,000 sessions made 11
// Web API calls per session instead of 5: BENCHMARKS.md, issue 26). Slack
// limits chat.update per workspace, so past this many h9 would only earn
// 429s. A run's last edit is not spaced (flushNow).
const editsPerInterval = 100

// editSpacing is the least time between two edits of one checklist while
// editing checklists have edits pending or in flight, at most budget of
// them an interval (editsPerInterval).
func editSpacing(interval time.Duration, editing, budget int64) time.Duration {
	if editing <= budget {
		return interval
	}
	return time.Duration(float64(interval) * float64(editing) / float64(budget))
}

// send edits the checklist, or posts it when an earlier post failed (a
// transient Slack error must not cost the session its checklist); a failed
// post is tried again on the next change. It reports whether the message
// now shows m, or never will from this holder for a reason of Slack's (an
// edit refused is logged, not tried again): false when the call was cut
// short (the lease lost, h9 stopping), the next holder's to make.
func (c *checklist) send(ts string, m render.Message) bool {
	if ts != "" {
		_ = c.api.Update(c.ctx, c.log, c.channel, ts, m)
		return c.ctx.Err() == nil
	}
	posted, err := c.api.PostMessage(c.ctx, c.log, c.channel, c.thread, m)
	if c.firstDone != nil {
		c.firstOnce.Do(func() { close(c.firstDone) })
	}
	if err != nil || posted == "" {
		return false
	}
	c.mu.Lock()
	c.ts = posted
	c.mu.Unlock()
	if c.onPosted != nil {
		c.onPosted(posted) // before the flush ends, so the actor is still there to save it
	}
	return true
}

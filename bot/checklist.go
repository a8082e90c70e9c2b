package bot

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/h9-app/h9/bot/render"
)

// checklist is one session's checklist message with coalesced edits: at
// most one chat.update per interval, and the latest state always lands.
// Safe for concurrent use (the run's events and the actor both set it).
type checklist struct {
	api      *slackAPI
	log      *slog.Logger
	channel  string
	ts       string // "" when the message could not be posted: edits are dropped
	interval time.Duration
	onIdle   func() // wakes the actor, which waits for the last edit before retiring

	mu       sync.Mutex
	cur      render.Checklist
	dirty    bool
	flushing bool
	lastSent time.Time
}

func (a *actor) newChecklist(ts string, first render.Checklist) *checklist {
	return &checklist{
		api: a.b.api, log: a.log, channel: a.rec.Channel, ts: ts,
		interval: a.b.cfg.CoalesceInterval, onIdle: a.signal,
		cur: first, lastSent: time.Now(),
	}
}

// set changes the checklist and schedules an edit.
func (c *checklist) set(f func(*render.Checklist)) {
	c.mu.Lock()
	f(&c.cur)
	if c.ts == "" {
		c.mu.Unlock()
		return
	}
	c.dirty = true
	start := !c.flushing
	c.flushing = true
	c.mu.Unlock()
	if start {
		go c.flush()
	}
}

// busy reports an edit pending or in flight.
func (c *checklist) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty || c.flushing
}

// flush sends the latest state, spacing edits by the interval, until
// nothing new arrived during the last one. It starts only when dirty.
func (c *checklist) flush() {
	for {
		c.mu.Lock()
		wait := c.interval - time.Since(c.lastSent)
		c.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		c.mu.Lock()
		snap := c.cur
		snap.Todos = slices.Clone(c.cur.Todos)
		c.dirty = false
		c.lastSent = time.Now()
		c.mu.Unlock()
		_ = c.api.update(context.Background(), c.log, c.channel, c.ts, render.RenderChecklist(snap))
		c.mu.Lock()
		if !c.dirty {
			c.flushing = false
			c.mu.Unlock()
			c.onIdle()
			return
		}
		c.mu.Unlock()
	}
}

package bot

import (
	"time"

	"github.com/h9-app/h9/bot/render"
)

// minActivityRefresh bounds how often the Now: line's clock is redrawn
// when H9_COALESCE_INTERVAL is shorter (or 0): it counts in seconds.
const minActivityRefresh = time.Second

// activityClock is when the checklist's current activity began, and
// which activity that is (a newer one retires the older one's ticker).
type activityClock struct {
	since   time.Time // zero: no activity
	gen     uint64
	tickers int           // running tickActivity goroutines: the checklist is busy until they end
	stop    chan struct{} // closed when the current activity ends
}

// endLocked ends the current activity's ticker; c.mu is held.
func (k *activityClock) endLocked() {
	k.gen++
	k.since = time.Time{}
	if k.stop != nil {
		close(k.stop)
		k.stop = nil
	}
}

// startActivity shows what the run does now and keeps how long it has
// been doing it fresh, one edit per refresh interval, while it lasts.
func (c *checklist) startActivity(activity string) {
	c.mu.Lock()
	c.clock.endLocked()
	gen, stop := c.clock.gen, make(chan struct{})
	c.clock.since, c.clock.stop = time.Now(), stop
	c.clock.tickers++
	c.mu.Unlock()
	c.set(func(r *render.Checklist) { r.Activity = activity })
	c.tasks.spawn(func() { c.tickActivity(gen, stop) }) // refused only when h9 has stopped
}

// endActivity clears the Now: line's command (it reads "working…" while
// the model thinks, and goes once the run ends).
func (c *checklist) endActivity() {
	c.mu.Lock()
	c.clock.endLocked()
	c.mu.Unlock()
	c.set(func(r *render.Checklist) { r.Activity = "" })
}

// stopClock ends the Now: line's clock (the run ended) without an edit of
// its own.
func (c *checklist) stopClock() {
	c.mu.Lock()
	c.clock.endLocked()
	c.mu.Unlock()
}

// tickActivity redraws the clock until its activity ends; the actor,
// which waits for a busy checklist before it retires, owns it.
func (c *checklist) tickActivity(gen uint64, stop <-chan struct{}) {
	t := time.NewTicker(max(c.interval, minActivityRefresh))
	defer t.Stop()
	defer func() {
		c.mu.Lock()
		c.clock.tickers--
		c.mu.Unlock()
		c.onIdle()
	}()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		live := c.clock.gen == gen && c.cur.Running && c.cur.Activity != ""
		c.mu.Unlock()
		if !live {
			return
		}
		c.set(func(*render.Checklist) {})
	}
}

// activityFor is how long the current activity has lasted; c.mu is held.
func (c *checklist) activityFor() time.Duration {
	if c.clock.since.IsZero() {
		return 0
	}
	return time.Since(c.clock.since)
}

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
	since time.Time // zero: no activity
	gen   uint64
}

// startActivity shows what the run does now and keeps how long it has
// been doing it fresh, one edit per refresh interval, while it lasts.
func (c *checklist) startActivity(activity string) {
	c.mu.Lock()
	c.clock.gen++
	gen := c.clock.gen
	c.clock.since = time.Now()
	c.mu.Unlock()
	c.set(func(r *render.Checklist) { r.Activity = activity })
	go c.tickActivity(gen)
}

// endActivity clears the Now: line's command (it reads "working…" while
// the model thinks, and goes once the run ends).
func (c *checklist) endActivity() {
	c.mu.Lock()
	c.clock.gen++
	c.clock.since = time.Time{}
	c.mu.Unlock()
	c.set(func(r *render.Checklist) { r.Activity = "" })
}

func (c *checklist) tickActivity(gen uint64) {
	t := time.NewTicker(max(c.interval, minActivityRefresh))
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
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

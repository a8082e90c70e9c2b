package bot

import "sync"

// dedupSize bounds the memory of seen keys. Slack redelivers within minutes,
// so the last few thousand envelopes and messages are plenty.
const dedupSize = 20000

// dedup remembers recently seen keys: envelope ids, event ids, and
// channel+ts of messages (Slack sends a mention as app_mention AND message).
type dedup struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string // insertion order, for eviction
	next int
}

func newDedup() *dedup {
	return &dedup{seen: make(map[string]struct{}, dedupSize), ring: make([]string, dedupSize)}
}

// first records key and reports whether it was new. An empty key is always new.
func (d *dedup) first(key string) bool {
	if key == "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; ok {
		return false
	}
	if old := d.ring[d.next]; old != "" {
		delete(d.seen, old)
	}
	d.ring[d.next] = key
	d.next = (d.next + 1) % len(d.ring)
	d.seen[key] = struct{}{}
	return true
}

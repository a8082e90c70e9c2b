package workspace

import (
	"path/filepath"
	"sync"
)

// maxIdleCgroups bounds the empty cgroups kept for reuse, per set of limits.
const maxIdleCgroups = 8

// cgroupPool keeps empty per-command cgroups for the next command with the
// same limits: creating a memory cgroup costs more than half a millisecond
// here, and reuse leaves only the joins on a command's path.
type cgroupPool struct {
	mu   sync.Mutex
	idle map[Limits][]*cmdCgroup
}

// take returns an empty cgroup with limits l, reused or new. Its kernel
// counters are cumulative, so their values now become the baseline.
func (b *cgroupBase) take(l Limits) (*cmdCgroup, error) {
	b.pool.mu.Lock()
	var c *cmdCgroup
	if idle := b.pool.idle[l]; len(idle) > 0 {
		c, b.pool.idle[l] = idle[len(idle)-1], idle[:len(idle)-1]
	}
	b.pool.mu.Unlock()
	if c == nil {
		var err error
		if c, err = b.create(l); err != nil {
			return nil, err
		}
	}
	c.limits = l
	c.baseMemory, c.basePids = c.counters()
	return c, nil
}

// give takes back a command's cgroup: killed, and kept for reuse if it is
// empty and the pool has room, else removed.
func (b *cgroupBase) give(c *cmdCgroup) {
	c.kill()
	if !c.empty() {
		go c.remove() // waits for the stragglers; the result need not
		return
	}
	b.pool.mu.Lock()
	defer b.pool.mu.Unlock()
	if b.pool.idle == nil {
		b.pool.idle = map[Limits][]*cmdCgroup{}
	}
	if len(b.pool.idle[c.limits]) >= maxIdleCgroups {
		go c.remove()
		return
	}
	b.pool.idle[c.limits] = append(b.pool.idle[c.limits], c)
}

// empty: no task is left, not even an exited one nobody has reaped yet
// (bwrap's namespace init is reaped by the host's init, later). Those still
// count in pids.current, and would count against the next command.
func (c *cmdCgroup) empty() bool {
	switch {
	case c.v2 != "":
		return readTrim(filepath.Join(c.v2, "pids.current")) == "0"
	case c.pids != "":
		return readTrim(filepath.Join(c.pids, "pids.current")) == "0"
	}
	return readTrim(filepath.Join(c.memory, "cgroup.procs")) == ""
}

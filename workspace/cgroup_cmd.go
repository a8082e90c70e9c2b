package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// cmdCgroup is one command's cgroup: one directory on v2, or one per v1
// hierarchy. The launcher joins it before the command starts, so every
// process of the command is counted and can be killed through it.
type cmdCgroup struct {
	v2, memory, pids     string
	limits               Limits
	baseMemory, basePids int64 // the kernel's counters when the command started
}

var cgroupSeq atomic.Uint64

// cgroupPrefix names h9's cgroups: h9-<h9 pid>-<sequence>.
const cgroupPrefix = "h9-"

func (b *cgroupBase) create(l Limits) (*cmdCgroup, error) {
	name := fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), cgroupSeq.Add(1))
	c := &cmdCgroup{}
	steps := []struct {
		base string
		dst  *string
		set  []cgroupValue
	}{
		{b.v2, &c.v2, []cgroupValue{{"memory.max", l.Memory.bytes(), true}, {"memory.swap.max", "0", false}, {"pids.max", strconv.Itoa(l.Pids), true}}},
		{b.memory, &c.memory, []cgroupValue{{"memory.limit_in_bytes", l.Memory.bytes(), true}, {"memory.memsw.limit_in_bytes", l.Memory.bytes(), false}}},
		{b.pids, &c.pids, []cgroupValue{{"pids.max", strconv.Itoa(l.Pids), true}}},
	}
	for _, s := range steps {
		if s.base == "" {
			continue
		}
		dir := filepath.Join(s.base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			c.remove()
			return nil, fmt.Errorf("creating cgroup: %w", err)
		}
		*s.dst = dir
		for _, v := range s.set {
			if err := os.WriteFile(filepath.Join(dir, v.file), []byte(v.value), 0); err != nil && v.required {
				c.remove()
				return nil, fmt.Errorf("setting %s: %w", v.file, err)
			}
		}
	}
	return c, nil
}

// cgroupValue is one control file to write; optional ones may be missing
// (no swap accounting).
type cgroupValue struct {
	file, value string
	required    bool
}

func (s Size) bytes() string { return strconv.FormatInt(int64(s), 10) }

func (c *cmdCgroup) dirs() []string {
	var out []string
	for _, d := range []string{c.v2, c.memory, c.pids} {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// kill kills every process in the cgroup: at once on v2, by listing on v1.
func (c *cmdCgroup) kill() {
	if c.v2 != "" {
		if os.WriteFile(filepath.Join(c.v2, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	for range 100 {
		alive := false
		for _, d := range c.dirs() {
			for _, f := range strings.Fields(readTrim(filepath.Join(d, "cgroup.procs"))) {
				if pid, err := strconv.Atoi(f); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
					alive = true
				}
			}
		}
		if !alive {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// remove kills what is left and deletes the directories, waiting briefly
// for dying processes to leave.
func (c *cmdCgroup) remove() {
	c.kill()
	for _, d := range c.dirs() {
		for i := 0; ; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || i == 200 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// limitsHit compares the kernel's counters with their values when the
// command started: processes killed for memory, forks refused for the
// process limit.
func (c *cmdCgroup) limitsHit() (memory, pids bool) {
	m, p := c.counters()
	return m > c.baseMemory, p > c.basePids
}

func (c *cmdCgroup) counters() (oomKills, forksRefused int64) {
	switch {
	case c.v2 != "":
		return counter(filepath.Join(c.v2, "memory.events"), "oom_kill"), counter(filepath.Join(c.v2, "pids.events"), "max")
	}
	if c.memory != "" {
		oomKills = counter(filepath.Join(c.memory, "memory.oom_control"), "oom_kill")
	}
	if c.pids != "" {
		forksRefused = counter(filepath.Join(c.pids, "pids.events"), "max")
	}
	return oomKills, forksRefused
}

// counter reads "key value" from a flat-keyed cgroup file.
func counter(path, key string) int64 {
	for _, line := range strings.Split(readTrim(path), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// removeStale deletes the cgroups of h9 processes that died without
// cleaning up (kill -9), once, when the base is found.
func (b *cgroupBase) removeStale() {
	for _, base := range []string{b.v2, b.memory, b.pids} {
		if base == "" {
			continue
		}
		ents, _ := os.ReadDir(base)
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			owner, _, _ := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(owner)
			if !ok || err != nil || !e.IsDir() || alive(pid) {
				continue
			}
			(&cmdCgroup{v2: filepath.Join(base, e.Name())}).remove()
		}
	}
}

// alive: the process exists (EPERM means it does, as another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

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
// empty and the pool has room, else removed before give returns. Removal
// is done here, by the command's own cleanup, rather than left to a
// goroutine nobody waits for: a cgroup whose last task is still being
// reaped (bwrap's namespace init) takes a few milliseconds, and h9's exit
// must not leave it behind.
func (b *cgroupBase) give(c *cmdCgroup) {
	c.kill()
	if c.empty() && b.pool.keep(c) {
		return
	}
	c.remove()
}

// keep adds an empty cgroup to the idle ones unless its limits already
// have maxIdleCgroups.
func (p *cgroupPool) keep(c *cmdCgroup) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[c.limits]) >= maxIdleCgroups {
		return false
	}
	if p.idle == nil {
		p.idle = map[Limits][]*cmdCgroup{}
	}
	p.idle[c.limits] = append(p.idle[c.limits], c)
	return true
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

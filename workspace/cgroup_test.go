package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// A cgroup give cannot pool is gone when give returns, even while its last
// task is still being reaped: nothing is left to a goroutine h9 does not
// wait for.
func TestCgroupGiveRemovesBeforeReturning(t *testing.T) {
	testenv.Need(t, "root")
	b, err := findCgroups()
	if err != nil { // a v1 hierarchy serves as well as v2: testenv's "cgroups" asks for v2
		if testenv.InCI() {
			t.Fatalf("CI runs as root but no cgroup is usable: %v", err)
		}
		t.Skipf("no usable cgroup: %v", err)
	}
	// Limits of this test alone, so no other test's cgroups share the pool.
	l := Limits{Memory: 96<<20 + 4096, Pids: 37}

	t.Run("straggler", func(t *testing.T) {
		c, err := b.create(l)
		if err != nil {
			t.Fatal(err)
		}
		// The straggler: a process in the cgroup that stays a zombie,
		// counted in pids.current, until the test reaps it 50 ms later.
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for _, d := range c.dirs() {
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal(err)
			}
		}
		var reaper sync.WaitGroup
		reaper.Go(func() {
			time.Sleep(50 * time.Millisecond)
			cmd.Wait()
		})
		defer reaper.Wait()
		b.give(c)
		for _, d := range c.dirs() {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("%s still there when give returned (%v)", d, err)
			}
		}
	})

	t.Run("pool full", func(t *testing.T) {
		var all []*cmdCgroup
		for range maxIdleCgroups + 1 {
			c, err := b.take(l)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, c)
		}
		for _, c := range all {
			b.give(c)
		}
		last := all[len(all)-1]
		for _, d := range last.dirs() {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("%s, one more than the pool keeps, still there when give returned (%v)", d, err)
			}
		}
		t.Cleanup(func() {
			for range maxIdleCgroups {
				if c, err := b.take(l); err == nil {
					c.remove()
				}
			}
		})
	})
}

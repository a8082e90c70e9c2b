package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

func TestParseSize(t *testing.T) {
	good := map[string]Size{
		"4GiB": 4 << 30, "512MiB": 512 << 20, "64KiB": 64 << 10, "1G": 1 << 30, "2m": 2 << 20,
		"1TiB": 1 << 40, "65536": 65536, " 3 GiB ": 3 << 30, "10B": 10, "1gb": 1 << 30,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "GiB", "1.5GiB", "4XB", "99999999999TiB", "1 2"} {
		if _, err := ParseSize(in); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseSize(%q) = %v, want ErrInvalidArgument", in, err)
		}
	}
	for s, want := range map[Size]string{4 << 30: "4GiB", 512 << 20: "512MiB", 1536: "1536B", 1<<20 + 1: "1048577B"} {
		if got := s.String(); got != want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(s), got, want)
		}
	}
}

// small limits, reached in a moment.
var testLimits = Limits{Memory: 64 << 20, Pids: 24, FileSize: 2 << 20, TmpSize: 1 << 20}

// Each limit is enforced by the kernel, the result names it, and another
// session's command running at the same time is unaffected.
func TestLimits(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	cases := []struct {
		name, cmd, note string
		cgroup, bwrap   bool
	}{
		{"memory", "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo ${#x}", "H9_SANDBOX_MEMORY", true, false},
		// bash retries a refused fork for seconds; the timeout ends it.
		{"processes", "for i in $(seq 60); do sleep 3 & done 2>/dev/null; wait", "H9_SANDBOX_PIDS", true, false},
		{"file size", "head -c 4194304 /dev/zero > big; ls -l big", "H9_SANDBOX_FILE_SIZE", false, false},
		{"tmp", "head -c 1572864 /dev/zero > /tmp/big", "H9_SANDBOX_TMP_SIZE", false, true},
		{"shm", "head -c 1572864 /dev/zero > /dev/shm/big", "H9_SANDBOX_TMP_SIZE", false, true},
	}
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			m := newManagerWith(t, Config{Sandbox: sb, Limits: testLimits})
			hog, bystander := openWS(t, m, "hog"), openWS(t, m, "bystander")
			for _, tc := range cases {
				if tc.bwrap && sb != "bwrap" {
					continue // without bwrap /tmp is a directory on the host's disk
				}
				t.Run(tc.name, func(t *testing.T) {
					if tc.cgroup {
						needCgroups(t, m)
					}
					var wg sync.WaitGroup
					var other BashResult
					wg.Go(func() { other = mustRun(t, bystander, "seq 5 | wc -l", BashOptions{}) })
					// The kernel ends the memory hog, in seconds on a loaded
					// machine; the others are ended by the timeout, the
					// processes one once its forks reach the limit (slow
					// on a loaded machine too).
					timeout := time.Second
					switch tc.name {
					case "memory":
						timeout = 30 * time.Second
					case "processes":
						timeout = 5 * time.Second
					}
					r := mustRun(t, hog, tc.cmd, BashOptions{Timeout: timeout})
					wg.Wait()
					if !strings.Contains(r.String(), tc.note) {
						t.Errorf("result does not name %s:\n%s", tc.note, r)
					}
					if other.ExitCode != 0 || strings.TrimSpace(other.Output) != "5" {
						t.Errorf("another session's command was affected: %+v", other)
					}
				})
			}
			if fi, err := os.Stat(filepath.Join(hog.Dir(), "big")); err == nil && fi.Size() > int64(testLimits.FileSize) {
				t.Errorf("a %d-byte file was written past the %s limit", fi.Size(), testLimits.FileSize)
			}
		})
	}
}

// Within the limits nothing is noted.
func TestNoNotesWithinLimits(t *testing.T) {
	w := openWS(t, newManagerWith(t, Config{Sandbox: "bwrap", Limits: testLimits}), "s")
	r := mustRun(t, w, "head -c 100000 /dev/zero > f; head -c 100000 /dev/zero > /tmp/f; x=$(seq 1000)", BashOptions{})
	if r.ExitCode != 0 || len(r.Notes) != 0 {
		t.Fatalf("got %+v", r)
	}
}

// A command's cgroup is emptied and reused by the next one with the same
// limits: commands in a row use one cgroup, which also shows that nothing
// of theirs (not even a zombie) is left in it. The kernel counters of a
// command that hit a limit do not count against the next.
func TestCgroupsAreReused(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			m := newManagerWith(t, Config{Sandbox: sb, Limits: testLimits})
			needCgroups(t, m)
			w := openWS(t, m, "s")
			mustRun(t, w, "for i in $(seq 60); do sleep 3 & done 2>/dev/null; wait", BashOptions{Timeout: time.Second})
			// A cgroup whose last task the host's init has not reaped yet
			// (bwrap's namespace init) is not reused; on a loaded machine that
			// can happen to any one command, so the row of five is tried up to
			// three times: a pool that never reuses fails all three.
			var before, after int
			for range 3 {
				before = ownCgroups()
				for range 5 {
					if r := mustRun(t, w, "true", BashOptions{}); r.ExitCode != 0 || len(r.Notes) != 0 {
						t.Fatalf("a command after one that hit the limit: %+v", r)
					}
				}
				if after = ownCgroups(); after <= max(before, 1) {
					return
				}
			}
			t.Errorf("%d cgroups of this process after 5 commands in a row (%d before): they are not reused", after, before)
		})
	}
}

// ownCgroups counts this process's cgroups in its busiest hierarchy.
func ownCgroups() int {
	b, _ := findCgroups()
	most := 0
	for _, dir := range []string{b.v2, b.memory, b.pids} {
		n := 0
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if dir != "" && strings.HasPrefix(e.Name(), cgroupPrefix+strconv.Itoa(os.Getpid())+"-") {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

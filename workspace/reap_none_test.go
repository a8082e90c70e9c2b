package workspace

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// TestNoSurvivorsWithoutSandbox tries to leave a process behind with
// H9_SANDBOX=none (execution mode), which ARCHITECTURE.md ("Sandbox
// guarantees") says must not
// happen: by killing the launcher (its $PPID), and, as root, by also
// leaving the command's cgroup, so that neither the subreaper nor the
// cgroup kill would find the survivor. The signal scope stops the kill.
func TestNoSurvivorsWithoutSandbox(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	if landlockABI() < landlockScopeABI {
		t.Skipf("Landlock ABI %d cannot scope signals: a command can kill its launcher here", landlockABI())
	}
	cases := []struct{ name, marker, cmd string }{
		{"kill launcher", "7771", "setsid sleep 7771 >/dev/null 2>&1 & disown; kill -9 $PPID"},
		{"leave cgroup and kill launcher", "7772", "(for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/cgroup.procs; do echo $BASHPID > $f; done 2>/dev/null; setsid sleep 7772 >/dev/null 2>&1 &); kill -9 $PPID"},
		{"leave cgroup", "7773", "(for f in /sys/fs/cgroup/*/cgroup.procs /sys/fs/cgroup/cgroup.procs; do echo $BASHPID > $f; done 2>/dev/null; setsid sleep 7773 >/dev/null 2>&1 &); true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t, "none")
			r, err := w.Bash(context.Background(), c.cmd, BashOptions{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", r.String())
			if pids := waitNoSleeper(c.marker, 5*time.Second); len(pids) > 0 {
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
				t.Errorf("processes outlived the command: %v", pids)
			}
		})
	}
}

// waitNoSleeper waits until no "sleep <marker>" runs, and returns the
// pids still running at the deadline.
func waitNoSleeper(marker string, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		out, _ := exec.Command("pgrep", "-x", "-f", "sleep "+marker).Output()
		var pids []int
		for _, f := range strings.Fields(string(out)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(50 * time.Millisecond)
	}
}

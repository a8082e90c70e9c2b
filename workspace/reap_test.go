package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"

	"golang.org/x/sys/unix"
)

// escapers leave processes behind the ways a shell can: a setsid session
// leader, a double fork (orphaned at once) and a disowned nohup job.
func escapers(m string) map[string]string {
	return map[string]string{ // nohup and disown leave a plain background job
		"setsid":      "setsid sleep " + m + " >/dev/null 2>&1 & sleep 0.1",
		"double fork": "(setsid sh -c 'sleep " + m + " &' &) ; sleep 0.1",
		"nohup":       "nohup sleep " + m + " >/dev/null 2>&1 & disown; sleep 0.1",
	}
}

func TestReapOnReturn(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		for _, plan := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s plan=%v", sb, plan), func(t *testing.T) {
				w := newWS(t, sb)
				for _, name := range []string{"setsid", "double fork", "nohup"} {
					t.Run(name, func(t *testing.T) {
						m := marker(t)
						r := mustRun(t, w, escapers(m)[name], BashOptions{ReadOnly: plan})
						if r.ExitCode != 0 || r.TimedOut {
							t.Fatalf("got %+v", r)
						}
						// No waiting: gone means gone when Bash returns.
						if pid, ok := findProcess(m); ok {
							t.Fatalf("process %d (sleep %s) outlived the command", pid, m)
						}
					})
				}
			})
		}
	}
}

// mustRun is Bash without the plan-mode checker: these tests are about
// what the kernel and the launcher do.
func mustRun(t testing.TB, w *Workspace, cmd string, opts BashOptions) BashResult {
	t.Helper()
	r, err := w.run(context.Background(), cmd, opts)
	if err != nil {
		t.Fatalf("run(%q): %v", cmd, err)
	}
	return r
}

func TestReapOnTimeoutAndStop(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			t.Run("timeout", func(t *testing.T) {
				m := marker(t)
				r := mustRun(t, w, "setsid sleep "+m+" >/dev/null 2>&1 & (sleep "+m+" &); sleep "+m, BashOptions{Timeout: time.Second})
				if !r.TimedOut {
					t.Fatalf("want a timeout, got %+v", r)
				}
				waitGone(t, m)
			})
			t.Run("stop", func(t *testing.T) {
				m := marker(t)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan BashResult, 1)
				go func() {
					r, _ := w.run(ctx, "setsid sleep "+m+" >/dev/null 2>&1 & touch started; sleep "+m, BashOptions{})
					done <- r
				}()
				waitFile(t, filepath.Join(w.Dir(), "started"))
				cancel()
				if r := <-done; !r.Cancelled {
					t.Fatalf("want cancelled, got %+v", r)
				}
				waitGone(t, m)
			})
		})
	}
}

// A command that tries to kill its own launcher: where Landlock scopes
// signals it may not; elsewhere it leaves its setsid child to init, where
// the command's cgroup still holds it, and h9 kills the cgroup.
func TestReapWhenLauncherKilled(t *testing.T) {
	m0 := newManager(t, "none")
	needCgroups(t, m0)
	w := openWS(t, m0, "s")
	m := marker(t)
	r := mustRun(t, w, "setsid sleep "+m+" >/dev/null 2>&1 & sleep 0.1; kill -9 $PPID", BashOptions{})
	scoped := landlockABI() >= landlockScopeABI
	if scoped && (r.ExitCode == 128+9 || !strings.Contains(r.Output, "Operation not permitted")) {
		t.Fatalf("want the kill refused by the signal scope, got %+v", r)
	}
	if !scoped && r.ExitCode != 128+9 {
		t.Fatalf("want the launcher killed, got %+v", r)
	}
	waitGone(t, m)
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !fileExists(p); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", p)
		}
	}
}

// Where h9 is PID 1 of a container, every orphan becomes its child, and
// Go reaps only the children it started: a command must leave no orphan at
// all, not even an exited one. The test makes itself a child subreaper to
// stand in for PID 1.
func TestNoZombiesLeftToTheReaper(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
			for range 5 {
				mustRun(t, w, "setsid sleep 1 >/dev/null 2>&1 & true", BashOptions{})
			}
			var orphans []int
			for _, pid := range descendants(os.Getpid()) {
				if p, _ := parentOf(pid); p == os.Getpid() {
					orphans = append(orphans, pid)
					syscall.Wait4(pid, nil, syscall.WNOHANG, nil)
				}
			}
			if len(orphans) > 0 {
				t.Errorf("commands left %d processes to the reaper: %v", len(orphans), orphans)
			}
		})
	}
}

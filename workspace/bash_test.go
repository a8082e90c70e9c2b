package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

func TestBashBasics(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			tests := []struct {
				name, cmd string
				code      int
				want      []string
			}{
				{"exit code", "echo hi; exit 3", 3, []string{"hi"}},
				{"stderr combined", "echo out; echo err >&2", 0, []string{"out", "err"}},
				{"cwd is workspace", "pwd", 0, []string{w.Dir()}},
				{"home is the session's, not the workspace", "echo $HOME", 0, []string{w.home}},
				{"term dumb", "echo $TERM", 0, []string{"dumb"}},
				{"stdin closed", "cat; echo done", 0, []string{"done"}},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					r := mustBash(t, w, tc.cmd, BashOptions{})
					if r.ExitCode != tc.code || r.TimedOut || r.Cancelled {
						t.Fatalf("result %+v, want exit %d", r, tc.code)
					}
					for _, s := range tc.want {
						if !strings.Contains(r.Output, s) {
							t.Errorf("output %q lacks %q", r.Output, s)
						}
					}
					if !strings.HasSuffix(r.String(), fmt.Sprintf("[exit code %d]", tc.code)) {
						t.Errorf("String() = %q", r.String())
					}
				})
			}
		})
	}
}

func TestBashEnvironmentHasNoSecrets(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	const secret = "xoxb-fake-h9-secret-4242"
	t.Setenv("SLACK_BOT_TOKEN", secret)
	t.Setenv("OPENAI_API_KEY", "sk-"+secret)
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			r := mustBash(t, w, "env", BashOptions{})
			if strings.Contains(r.Output, secret) || strings.Contains(r.Output, "SLACK_BOT_TOKEN") {
				t.Fatalf("secret leaked into env:\n%s", r.Output)
			}
			for _, want := range []string{"HOME=" + w.home, "TERM=dumb", "PATH="} {
				if !strings.Contains(r.Output, want) {
					t.Errorf("env lacks %s:\n%s", want, r.Output)
				}
			}
		})
	}
}

// waitGone polls until no live process carries marker. Kill is synchronous
// but reaping by init is not, so this polls with a generous bound.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, ok := findProcess(marker); !ok {
			return
		}
	}
	pid, _ := findProcess(marker)
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d with %q survived", pid, marker)
}

func marker(t *testing.T) string {
	return fmt.Sprintf("1000.%d%d", os.Getpid(), time.Now().UnixNano()%1e6)
}

func TestBashTimeoutKillsBackgroundGrandchild(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			m := marker(t)
			r := mustBash(t, w, "sleep "+m+" & echo $! > bg.pid; echo started; wait", BashOptions{Timeout: time.Second})
			if !r.TimedOut || !strings.Contains(r.String(), "[timed out after 1s]") {
				t.Fatalf("want timeout, got %+v", r)
			}
			if !strings.Contains(r.Output, "started") {
				t.Errorf("output before the timeout lost: %q", r.Output)
			}
			waitGone(t, m)
			if sb == "none" { // the pid file holds a host pid only without a PID namespace
				b, err := os.ReadFile(filepath.Join(w.Dir(), "bg.pid"))
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if err := syscall.Kill(pid, 0); err == nil {
					if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !strings.Contains(string(st), ") Z") {
						t.Errorf("grandchild %d still alive", pid)
					}
				}
			}
		})
	}
}

func TestBashBackgroundJobDoesNotOutliveCall(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			m := marker(t)
			// The background sleep holds the output pipe; Bash must still return.
			r := mustBash(t, w, "sleep "+m+" & echo bye", BashOptions{})
			if r.ExitCode != 0 || r.TimedOut || !strings.Contains(r.Output, "bye") {
				t.Fatalf("got %+v", r)
			}
			waitGone(t, m)
		})
	}
}

func TestBashContextCancel(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			m := marker(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan BashResult)
			go func() {
				r, _ := w.Bash(ctx, "sleep "+m+" & touch started; wait", BashOptions{})
				done <- r
			}()
			for !fileExists(filepath.Join(w.Dir(), "started")) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			r := <-done
			if !r.Cancelled || r.TimedOut || !strings.HasSuffix(r.String(), "[cancelled]") {
				t.Fatalf("want cancelled, got %+v", r)
			}
			waitGone(t, m)
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestBashOutputCapKeepsHeadAndTail(t *testing.T) {
	w := newWS(t, "none")
	r := mustBash(t, w, "printf START; head -c 200000 /dev/zero | tr '\\0' a; printf END", BashOptions{})
	if !strings.HasPrefix(r.Output, "START") || !strings.HasSuffix(r.Output, "END") {
		t.Fatalf("head or tail lost: %q…%q", r.Output[:20], r.Output[len(r.Output)-20:])
	}
	if !strings.Contains(r.Output, "bytes of output cut") || len(r.Output) > MaxOutputChars+200 {
		t.Fatalf("output not capped: %d chars", len(r.Output))
	}
	cut := len("START") + 200000 + len("END") - MaxOutputChars
	if !strings.Contains(r.Output, fmt.Sprintf("[%d bytes of output cut", cut)) {
		t.Errorf("marker does not say %d bytes were cut", cut)
	}
}

func TestBashTimeoutBounds(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	w := newWS(t, "none")
	tests := []struct {
		in, want time.Duration
	}{
		{0, DefaultBashTimeout},
		{-time.Second, DefaultBashTimeout},
		{time.Hour, MaxBashTimeout},
		{5 * time.Second, 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.in.String(), func(t *testing.T) {
			r := mustBash(t, w, "true", BashOptions{Timeout: tc.in})
			if r.Timeout != tc.want {
				t.Errorf("timeout %v, want %v", r.Timeout, tc.want)
			}
		})
	}
}

func TestBashErrors(t *testing.T) {
	w := newWS(t, "none")
	if _, err := w.Bash(context.Background(), "  ", BashOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty command: %v", err)
	}
	if _, err := w.Bash(context.Background(), "echo x > f", BashOptions{ReadOnly: true}); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "plan mode is read-only") {
		t.Errorf("plan mode write: %v", err)
	}
	if fileExists(filepath.Join(w.Dir(), "f")) {
		t.Error("refused command still ran")
	}
	if r := mustBash(t, w, "ls -la && grep -r foo . || true", BashOptions{ReadOnly: true}); r.ExitCode != 0 {
		t.Errorf("read-only command failed: %+v", r)
	}
	w.Close()
	if _, err := w.Bash(context.Background(), "true", BashOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

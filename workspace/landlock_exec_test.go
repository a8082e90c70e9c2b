package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// newLandlockManager is a Manager in the Landlock execution mode, which
// H9_SANDBOX=auto chooses where bwrap cannot run.
func newLandlockManager(t *testing.T) *Manager {
	t.Helper()
	testenv.Need(t, "landlock:1")
	m := newManager(t, "landlock")
	if m.Level() != LevelLandlock {
		t.Fatalf("level %s, want landlock", m.Level())
	}
	return m
}

// In the Landlock execution mode a command writes its workspace, home and
// /tmp, and nothing else: not the host, not another session's workspace
// or home, and it reads nothing of the data directory outside its
// session. Its TCP is refused (ABI ≥ 4), and it cannot signal its
// launcher (ABI ≥ 6).
func TestLandlockExecutionModeConfinesToTheSession(t *testing.T) {
	m := newLandlockManager(t)
	w := openWS(t, m, "mine")
	other := openWS(t, m, "other")
	writeHostFile(t, filepath.Join(other.Dir(), "private.txt"), "OTHER-SESSION\n")
	data := filepath.Dir(m.root)
	writeHostFile(t, filepath.Join(data, "h9.db"), "DATABASE\n")
	hostTmp := filepath.Join(os.TempDir(), "h9-landlock-probe-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.Remove(hostTmp) })

	r := mustBash(t, w, `echo a > ws.txt && mkdir -p d && chmod +x ws.txt && echo b > "$HOME/h.txt" && echo c > "$TMPDIR/t" && cat ws.txt "$HOME/h.txt" "$TMPDIR/t"`, BashOptions{})
	if r.ExitCode != 0 || r.Output != "a\nb\nc\n" {
		t.Fatalf("the session's own places are not writable: %+v", r)
	}
	for _, cmd := range []string{
		"echo x > " + hostTmp, "echo x > " + filepath.Join(other.Dir(), "planted"), "echo x > " + filepath.Join(other.home, "planted"),
		"echo x >> " + filepath.Join(data, "h9.db"), "touch /etc/h9-probe", "rm " + filepath.Join(other.Dir(), "private.txt"),
	} {
		if r := mustBash(t, w, cmd+" && echo WROTE", BashOptions{}); strings.Contains(r.Output, "WROTE") {
			t.Errorf("%q succeeded: %+v", cmd, r)
		}
	}
	if _, err := os.Stat(hostTmp); err == nil {
		t.Error("the command wrote the host's /tmp")
	}
	for _, f := range []string{filepath.Join(other.Dir(), "private.txt"), filepath.Join(data, "h9.db")} {
		if r := mustBash(t, w, "cat "+f+"; ls "+filepath.Dir(f)+" && echo LISTED", BashOptions{}); strings.Contains(r.Output, "OTHER-SESSION") || strings.Contains(r.Output, "DATABASE") || strings.Contains(r.Output, "LISTED") {
			t.Errorf("read outside the session: %+v", r)
		}
	}
	if m.Enforcement().LandlockABI >= 4 {
		cmd := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) && echo CONNECTED", discardPort(t))
		if r := mustBash(t, w, cmd, BashOptions{}); strings.Contains(r.Output, "CONNECTED") {
			t.Errorf("TCP connected: %+v", r)
		}
		if r := mustBash(t, w, cmd, BashOptions{Network: true}); !strings.Contains(r.Output, "CONNECTED") {
			t.Errorf("a setup command (Network) could not connect: %+v", r)
		}
	}
	if m.Enforcement().LandlockABI >= landlockScopeABI {
		if r := mustBash(t, w, "kill -9 $PPID && echo KILLED", BashOptions{}); strings.Contains(r.Output, "KILLED") {
			t.Errorf("the command killed its launcher: %+v", r)
		}
	}
	if r := mustBash(t, w, perlErrno(`defined shmget(0, 65536, 01600)`), BashOptions{}); !strings.Contains(r.Output, "ERR") {
		t.Errorf("SysV shared memory outside any IPC namespace: %+v", r)
	}
}

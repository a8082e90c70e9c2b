package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// planWrites are writes of every kind; run without the checker, each must
// fail by the kernel alone.
var planWrites = []string{
	"echo x > new.txt", "echo x >> existing.txt", ": > existing.txt", "truncate -s 0 existing.txt",
	"rm existing.txt", "mv existing.txt moved.txt", "mkdir d", "rmdir sub", "ln existing.txt hard",
	"ln -s existing.txt soft", "mkfifo fifo", "cp existing.txt copy", "touch existing.txt",
	"touch -d 2001-01-01 existing.txt", "chmod 777 existing.txt", "chown 1:1 existing.txt",
	"setfattr -n user.x -v y existing.txt", "chattr +A existing.txt", "sed -i s/keep/gone/ existing.txt",
	"git init -q", "python3 -c 'open(\"existing.txt\",\"w\")'", "perl -e 'unlink \"existing.txt\"'",
	"echo x > $HOME/dotfile",
}

func TestPlanModeReadOnlyByKernel(t *testing.T) {
	for _, sb := range planModes {
		t.Run(sb, func(t *testing.T) {
			m := newManager(t, sb)
			if sb == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			writeHostFile(t, filepath.Join(w.Dir(), "existing.txt"), "keep\n")
			os.Mkdir(filepath.Join(w.Dir(), "sub"), 0o755)
			before := snapshot(t, w.Dir())
			home := snapshot(t, w.home)
			for _, cmd := range planWrites {
				r := mustRun(t, w, cmd, BashOptions{ReadOnly: true})
				if after := snapshot(t, w.Dir()); after != before {
					t.Fatalf("%q changed the workspace in plan mode (%+v)", cmd, r)
				}
			}
			if snapshot(t, w.home) != home {
				t.Errorf("plan mode wrote the session's home")
			}
			if r := mustRun(t, w, "cat existing.txt && ls", BashOptions{ReadOnly: true}); !strings.Contains(r.Output, "keep") {
				t.Errorf("plan mode cannot read: %+v", r)
			}
			// The same commands work outside plan mode: the test is not vacuous.
			if r := mustRun(t, w, "echo x > new.txt && chmod 600 new.txt && rm new.txt", BashOptions{}); r.ExitCode != 0 {
				t.Errorf("execution mode cannot write: %+v", r)
			}
		})
	}
}

// Landlock also denies TCP in plan mode, and leaves h9 itself unrestricted.
func TestLandlockPlanModeNetworkAndH9Unrestricted(t *testing.T) {
	m := newManager(t, "none")
	testenv.Need(t, "landlock:1")
	w := openWS(t, m, "s")
	cmd := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) && echo CONNECTED", discardPort(t))
	if m.Enforcement().LandlockABI >= 4 {
		if r := mustRun(t, w, cmd, BashOptions{ReadOnly: true}); strings.Contains(r.Output, "CONNECTED") {
			t.Errorf("plan mode under Landlock connected: %+v", r)
		}
	}
	if r := mustRun(t, w, cmd, BashOptions{}); !strings.Contains(r.Output, "CONNECTED") {
		t.Errorf("control: execution mode without a sandbox could not connect: %+v", r)
	}
	// This process ran the confined command's launcher: it must still be
	// able to write outside any workspace and hold no_new_privs as before.
	p := filepath.Join(t.TempDir(), "h9-still-free")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Errorf("h9 itself got restricted: %v", err)
	}
	if st, _ := os.ReadFile("/proc/self/status"); strings.Contains(string(st), "Seccomp:\t2") {
		t.Errorf("h9 itself got a seccomp filter:\n%s", st)
	}
}

package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// allModes are every sandbox level with both modes of a command.
var allModes = []struct {
	sandbox string
	plan    bool
}{{"bwrap", false}, {"bwrap", true}, {"none", false}, {"none", true}}

// keyringChild marks the test binary re-run inside a named session keyring.
const keyringChild = "H9_TEST_KEYRING_CHILD"

// No command, in any mode, reaches a kernel keyring: run as systemd runs a
// service, in a named session keyring holding a key, a command can neither
// read that key, add one, nor unlink it (under bwrap as root the sandbox's
// uid 0 is the host's, so only the seccomp filter stands in the way). The
// test re-runs itself under `keyctl session`, so its own keyrings are not
// touched.
func TestKeyringRefusedInEveryMode(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	if os.Getenv(keyringChild) == "" {
		keyctl, err := exec.LookPath("keyctl")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but keyctl is missing (apt-get install -y keyutils): %v", err)
			}
			t.Skipf("keyctl not installed (apt-get install -y keyutils): %v", err)
		}
		cmd := exec.Command(keyctl, "session", "h9test", os.Args[0], "-test.run=^TestKeyringRefusedInEveryMode$", "-test.v")
		cmd.Env = append(os.Environ(), keyringChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestKeyringRefusedInEveryMode") {
			t.Fatalf("in a named session keyring: %v\n%s", err, out)
		}
		return
	}
	id := strings.TrimSpace(hostRun(t, "keyctl", "add", "user", "h9-host-secret", "payload-42", "@s"))
	if got := hostRun(t, "keyctl", "print", id); !strings.Contains(got, "payload-42") {
		t.Fatalf("control: the host cannot read its own key: %q", got)
	}
	for _, mode := range allModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			m := newManager(t, mode.sandbox)
			w := openWS(t, m, "s")
			for _, cmd := range []string{"keyctl print " + id, "keyctl rdescribe @s", "keyctl add user planted x @s && echo ADDED",
				"keyctl add user planted x @u && echo ADDED", "keyctl unlink " + id + " @s && echo UNLINKED"} {
				r := mustRun(t, w, cmd, BashOptions{ReadOnly: mode.plan})
				if r.ExitCode == 0 || strings.Contains(r.Output, "payload-42") || strings.Contains(r.Output, "h9test") {
					t.Errorf("%q reached the keyring: %+v", cmd, r)
				}
			}
		})
	}
	if got := hostRun(t, "keyctl", "print", id); !strings.Contains(got, "payload-42") {
		t.Errorf("the host's key is gone: %q", got)
	}
	if out, err := exec.Command("keyctl", "search", "@s", "user", "planted").CombinedOutput(); err == nil {
		t.Errorf("a command added a key to h9's session keyring: %s", out)
	}
}

func hostRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// perlErrno runs a perl statement that returns false on failure and
// prints "ERR <errno text>" or "OK".
func perlErrno(stmt string) string {
	return `perl -e '` + stmt + ` or do { print "ERR $!\n"; exit 1 }; print "OK\n"'`
}

// The ioctls that change an inode's metadata are refused in every mode,
// on a read-only descriptor too (FS_IOC_SETVERSION needs none to write):
// the file's generation, flags and ctime stay.
func TestMetadataIoctlsRefusedInEveryMode(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	ioctls := map[string]string{"FS_IOC_SETVERSION": "0x40087602", "FS_IOC_SETFLAGS": "0x40086602", "FS_IOC_FSSETXATTR": "0x401c5820"}
	for _, mode := range allModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			w := openWS(t, newManager(t, mode.sandbox), "s")
			f := filepath.Join(w.Dir(), "f.txt")
			writeHostFile(t, f, "x\n")
			before, _ := os.Stat(f)
			for name, nr := range ioctls {
				arg := `pack("q", 5)`
				if name == "FS_IOC_FSSETXATTR" {
					arg = `"\0" x 28`
				}
				cmd := perlErrno(`($a = ` + arg + `) && open(F, "<", "f.txt") && ioctl(F, ` + nr + `, $a)`)
				r := mustRun(t, w, cmd, BashOptions{ReadOnly: mode.plan})
				if !strings.Contains(r.Output, "ERR Operation not permitted") {
					t.Errorf("%s on a read-only descriptor: %+v, want EPERM", name, r)
				}
			}
			if after, _ := os.Stat(f); !after.ModTime().Equal(before.ModTime()) || ctime(after) != ctime(before) {
				t.Errorf("the file's metadata changed")
			}
		})
	}
}

// Plan mode without bwrap opens no socket of any family and reaches no
// SysV IPC or POSIX message queue, whatever the command (the kernel alone
// is tested: no checker). Execution mode is the control.
func TestLandlockPlanModeHasNoSocketsOrIPC(t *testing.T) {
	m := newManager(t, "none")
	testenv.Need(t, "landlock:1")
	w := openWS(t, m, "s")
	probes := map[string]string{
		"unix socket":    perlErrno(`socket(S, 1, 1, 0)`),
		"udp socket":     perlErrno(`socket(S, 2, 2, 0)`),
		"tcp6 socket":    perlErrno(`socket(S, 10, 1, 0)`),
		"netlink socket": perlErrno(`socket(S, 16, 3, 0)`),
		"socketpair":     perlErrno(`socketpair(A, B, 1, 2, 0)`),
		"SysV shm":       perlErrno(`defined shmget(0, 65536, 01600)`),
		"SysV msg queue": perlErrno(`defined msgget(0, 01600)`),
		"SysV semaphore": perlErrno(`defined semget(0, 1, 01600)`),
		"bash /dev/udp":  `(exec 3>/dev/udp/127.0.0.1/9) && echo OK || echo ERR`,
		"POSIX mq_open":  perlErrno(`($q = "h9q") && syscall(240, $q, 0100|02, 0600, 0) >= 0`),
	}
	for name, cmd := range probes {
		if name == "POSIX mq_open" && runtime.GOARCH != "amd64" {
			continue // the number is amd64's
		}
		r := mustRun(t, w, cmd, BashOptions{ReadOnly: true})
		if !strings.Contains(r.Output, "ERR") || strings.Contains(r.Output, "OK") {
			t.Errorf("plan mode: %s: %+v", name, r)
		}
		if strings.HasSuffix(name, "socket") || name == "socketpair" { // the others would leave IPC objects on the host
			if r := mustRun(t, w, cmd, BashOptions{}); !strings.Contains(r.Output, "OK") {
				t.Errorf("control: execution mode: %s: %+v", name, r)
			}
		}
	}
	if out, err := exec.Command("git", "init", "-q", w.Dir()).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if r := mustRun(t, w, "git status --short && echo GIT-OK", BashOptions{ReadOnly: true}); !strings.Contains(r.Output, "GIT-OK") {
		t.Errorf("git cannot run in plan mode without sockets: %+v", r)
	}
}

func ctime(fi os.FileInfo) syscall.Timespec { return fi.Sys().(*syscall.Stat_t).Ctim }

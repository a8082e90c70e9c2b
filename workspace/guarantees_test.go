package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// confinedModes are the (sandbox, plan mode) pairs in which the kernel
// confines a command: everything under bwrap, plan mode under Landlock.
var confinedModes = []struct {
	sandbox string
	plan    bool
}{{"bwrap", false}, {"bwrap", true}, {"none", true}}

func modeName(sandbox string, plan bool) string {
	return fmt.Sprintf("%s plan=%v", sandbox, plan)
}

func TestNoCapabilitiesInside(t *testing.T) {
	for _, mode := range confinedModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			m := newManager(t, mode.sandbox)
			if mode.sandbox == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			r := mustRun(t, w, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status", BashOptions{ReadOnly: mode.plan})
			sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
			if os.Geteuid() == 0 {
				// Only root may empty the bounding set; without it, and with
				// no_new_privs, no exec can add to the others anyway.
				sets = append(sets, "CapBnd")
			}
			for _, f := range sets {
				if !strings.Contains(r.Output, f+":\t0000000000000000") {
					t.Errorf("%s not empty:\n%s", f, r.Output)
				}
			}
			if !strings.Contains(r.Output, "NoNewPrivs:\t1") {
				t.Errorf("no_new_privs not set:\n%s", r.Output)
			}
			// What root could do with capabilities, none of which works.
			probe := filepath.Join(w.Dir(), "..", "escaped-"+marker(t))
			for _, cmd := range []string{
				"mount -o remount,bind,rw / && echo x > /etc/h9-remount-probe",
				"mount -o remount,bind,rw " + w.Dir(),
				"mount -t tmpfs none /mnt",
				"chroot / true",
				"unshare -Ur true",
				"setpriv --reuid=1 --regid=1 --clear-groups true",
			} {
				if r := mustRun(t, w, cmd, BashOptions{ReadOnly: mode.plan}); r.ExitCode == 0 {
					t.Errorf("%q succeeded inside the sandbox: %+v", cmd, r)
				}
			}
			// Outside the workspace nothing of the host is writable; the
			// probe may land in the sandbox's own /tmp, never on the host.
			mustRun(t, w, "echo x > "+probe, BashOptions{ReadOnly: mode.plan})
			for _, p := range []string{"/etc/h9-remount-probe", probe} {
				if fileExists(p) {
					os.Remove(p)
					t.Errorf("%s was written on the host", p)
				}
			}
		})
	}
}

const decoyContent = "h9-decoy-content\n"

// hostDecoys creates, on the host, everything a command must not see: a
// database and another session's workspace in the data directory, files in
// the host's /tmp and /var/tmp, and a listening unix socket.
func hostDecoys(t *testing.T, m *Manager) (files []string, sock string) {
	t.Helper()
	data := filepath.Dir(m.root)
	files = []string{filepath.Join(data, "h9.db"), filepath.Join(m.root, "other-session", "secret.txt")}
	for _, dir := range []string{os.TempDir(), "/var/tmp"} {
		f, err := os.CreateTemp(dir, "h9-decoy-")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		files = append(files, f.Name())
	}
	for _, f := range files[:2] {
		writeHostFile(t, f, decoyContent)
	}
	sock = filepath.Join(data, "decoy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	t.Cleanup(func() { ln.Close(); accepting.Wait() })
	return files, sock
}

func TestViewShowsOnlyTheSession(t *testing.T) {
	for _, mode := range confinedModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			m := newManager(t, mode.sandbox)
			if mode.sandbox == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			files, sock := hostDecoys(t, m)
			opts := BashOptions{ReadOnly: mode.plan}
			for _, p := range append(files, "/etc/shadow") {
				if r := mustRun(t, w, "cat "+p, opts); r.ExitCode == 0 || strings.Contains(r.Output, decoyContent) {
					t.Errorf("%s readable: %+v", p, r)
				}
			}
			for _, d := range []string{"/root", "/home", "/run", "/var/run", "/var/lib", "/var/tmp", m.root + "/other-session"} {
				if r := mustRun(t, w, "ls -A "+d, opts); r.ExitCode == 0 {
					t.Errorf("%s listable: %+v", d, r)
				}
			}
			if r := mustRun(t, w, "ls -A "+m.root, opts); strings.Contains(r.Output, "other-session") {
				t.Errorf("another session's workspace is listed: %q", r.Output)
			}
			if mode.sandbox == "bwrap" {
				// No host socket exists inside at all. (Landlock before ABI 9
				// cannot refuse connecting to one: there the checker, which
				// allows no program that can, is what stands in the way.)
				if r := mustRun(t, w, "test -e "+sock+" && echo SEEN", opts); strings.Contains(r.Output, "SEEN") {
					t.Errorf("host unix socket %s visible", sock)
				}
			}
			if r := mustRun(t, w, "echo ok > $TMPDIR/mine && cat $TMPDIR/mine", opts); !strings.Contains(r.Output, "ok") {
				t.Errorf("the command's own /tmp is not writable: %+v", r)
			}
		})
	}
}

// H9_SANDBOX_RO_PATHS shows a directory read-only; a data directory inside
// it stays covered.
func TestReadOnlyPathsAndCoveredDataDir(t *testing.T) {
	for _, mode := range confinedModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			shared := t.TempDir()
			writeHostFile(t, filepath.Join(shared, "toolchain", "VERSION"), "go-shared\n")
			data := filepath.Join(shared, "h9-data")
			writeHostFile(t, filepath.Join(data, "h9.db"), decoyContent)
			m := newManagerWith(t, Config{Sandbox: mode.sandbox, Root: filepath.Join(data, "workspaces"),
				Hidden: []string{data}, ROPaths: []string{shared}})
			if mode.sandbox == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			opts := BashOptions{ReadOnly: mode.plan}
			if r := mustRun(t, w, "cat "+shared+"/toolchain/VERSION", opts); !strings.Contains(r.Output, "go-shared") {
				t.Errorf("read-only path not readable: %+v", r)
			}
			if r := mustRun(t, w, "echo x > "+shared+"/toolchain/new", opts); r.ExitCode == 0 || fileExists(shared+"/toolchain/new") {
				t.Errorf("read-only path writable: %+v", r)
			}
			if r := mustRun(t, w, "cat "+data+"/h9.db", opts); r.ExitCode == 0 || strings.Contains(r.Output, decoyContent) {
				t.Errorf("data directory inside a read-only path is visible: %+v", r)
			}
			if r := mustRun(t, w, "echo fine > f && cat f", BashOptions{}); !mode.plan && !strings.Contains(r.Output, "fine") {
				t.Errorf("workspace under a covered data directory not writable: %+v", r)
			}
		})
	}
}

func TestReadOnlyPathsRefused(t *testing.T) {
	data := t.TempDir()
	for _, p := range []string{"relative/dir", "/", "/proc/self", filepath.Join(data, "inside"), "/no/such/dir"} {
		t.Run(p, func(t *testing.T) {
			os.MkdirAll(filepath.Join(data, "inside"), 0o755)
			_, err := NewManager(Config{Root: filepath.Join(data, "workspaces"), Sandbox: "none", Hidden: []string{data}, ROPaths: []string{p}})
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), p) {
				t.Fatalf("NewManager with read-only path %q: %v", p, err)
			}
		})
	}
}

// A repository's setup command gets the network (issue 14); nothing else.
func TestNetworkOption(t *testing.T) {
	const secret = "xoxb-setup-secret-1234"
	t.Setenv("SLACK_BOT_TOKEN", secret)
	connect := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) && echo CONNECTED; env", discardPort(t))
	w := newWS(t, "bwrap")
	if r := mustRun(t, w, connect, BashOptions{}); strings.Contains(r.Output, "CONNECTED") {
		t.Errorf("connected without Network: %+v", r)
	}
	r := mustRun(t, w, connect+"; grep -c . /etc/resolv.conf; ls /root", BashOptions{Network: true})
	if !strings.Contains(r.Output, "CONNECTED") {
		t.Errorf("no network with Network: %+v", r)
	}
	if strings.Contains(r.Output, secret) {
		t.Errorf("a secret reached the setup command's environment:\n%s", r.Output)
	}
	if !strings.Contains(r.Output, "ls: cannot access '/root'") {
		t.Errorf("Network changed the view: %+v", r)
	}
	if _, err := w.Bash(context.Background(), "true", BashOptions{Network: true, ReadOnly: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("network in plan mode: %v", err)
	}
}

// The workspace's own git directory works inside the sandbox: written in
// execution mode, read in plan mode.
func TestWorkspaceGitInsideSandbox(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		t.Run(sb, func(t *testing.T) {
			w := newWS(t, sb)
			r := mustBash(t, w, "git init -q && echo a > a.txt && git add a.txt && "+
				"git -c user.name=h9 -c user.email=h9@localhost commit -qm first && git log --oneline", BashOptions{})
			if r.ExitCode != 0 || !strings.Contains(r.Output, "first") {
				t.Fatalf("git in execution mode: %+v", r)
			}
			writeHostFile(t, filepath.Join(w.Dir(), "a.txt"), "changed\n")
			r = mustBash(t, w, "git status --short && git log --oneline && git diff --stat", BashOptions{ReadOnly: true})
			if r.ExitCode != 0 || !strings.Contains(r.Output, "M a.txt") || !strings.Contains(r.Output, "first") {
				t.Fatalf("git in plan mode: %+v", r)
			}
		})
	}
}

// A .gitconfig (or .bashrc …) in the workspace is content, not the user's
// configuration: HOME is the session's own directory.
func TestWorkspaceGitconfigIsNotHonoured(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	for _, sb := range sandboxes {
		for _, plan := range []bool{false, true} {
			t.Run(modeName(sb, plan), func(t *testing.T) {
				w := newWS(t, sb)
				writeHostFile(t, filepath.Join(w.Dir(), ".gitconfig"), "[user]\n\tname = Poisoned\n[core]\n\tpager = touch pwned\n")
				r := mustBash(t, w, "git config --get user.name; pwd", BashOptions{ReadOnly: plan})
				if strings.Contains(r.Output, "Poisoned") || !strings.Contains(r.Output, w.Dir()) {
					t.Fatalf("the workspace's .gitconfig was honoured: %+v", r)
				}
			})
		}
	}
}

package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// place is where one command runs: its workspace and home, and what it may
// do there.
type place struct {
	dir, home string
	readOnly  bool     // plan mode: workspace and home read-only
	network   bool     // share the host's network (a repository's setup command)
	egress    string   // the proxy socket's directory: network through h9's proxy only (network.go)
	env       []string // added to the environment: a setup command's secrets (secrets.go)
	cache     string   // the repository's cache directory (cache.go); "" for none
	// shared are the directories holding objects borrowed from the
	// repository cache (shared.go); nil for most workspaces.
	shared *sharedMounts
}

// bwrapArgs is the hardened invocation: every namespace unshared (a user
// namespace too, so bwrap never keeps root's capabilities; nested ones
// disabled), all capabilities dropped, and a view built from nothing:
// the system directories read-only, the secret files under them replaced by
// an unreadable node, the hidden directories (the data directory) covered,
// a fresh /dev and /proc, size-capped /tmp and /dev/shm, the workspace and
// its home. The root, /dev and the covers are remounted read-only last,
// once every mount point exists.
func (s *sandbox) bwrapArgs(p place, env []string, argv []string) []string {
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
		"--die-with-parent", "--new-session", "--as-pid-1", "--clearenv", "--info-fd", "3", "--block-fd", "4"}
	if p.network {
		a = append(a, "--share-net")
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	for _, d := range s.view.system {
		if d.link != "" {
			a = append(a, "--symlink", d.link, d.path)
		} else {
			a = append(a, "--ro-bind", d.path, d.path)
		}
	}
	tmp := strconv.FormatInt(int64(s.limits.TmpSize), 10)
	a = append(a, "--dev", "/dev", "--size", tmp, "--tmpfs", "/dev/shm", "--proc", "/proc", "--size", tmp, "--tmpfs", "/tmp")
	a = append(a, procReadOnly()...)
	for _, r := range s.view.roPaths {
		a = append(a, "--ro-bind", r, r)
	}
	roots := s.view.roots()
	for _, f := range secrets() {
		if underAny(f, roots) {
			a = append(a, "--ro-bind", "/dev/null", f)
		}
	}
	covers := s.covers(roots)
	for _, c := range covers {
		a = append(a, "--tmpfs", c)
	}
	if p.network {
		a = append(a, resolvConfBind(roots)...)
	}
	bind := "--bind"
	if p.readOnly {
		bind = "--ro-bind"
	}
	a = append(a, bind, p.dir, p.dir)
	a = append(a, p.shared.bwrapArgs(p.readOnly)...)
	a = append(a, bind, p.home, p.home, "--chdir", p.dir)
	a = append(a, cacheBind(p.cache, bind)...)
	a = append(a, s.egressBinds(p)...)
	for _, c := range covers {
		a = append(a, "--remount-ro", c)
	}
	a = append(a, "--remount-ro", "/dev", "--remount-ro", "/")
	a = append(a, "--seccomp", strconv.Itoa(seccompFD(p)), "--")
	return append(a, argv...)
}

// seccompFD is the descriptor bwrap reads the command's seccomp program
// from: the one after the shared directories' (bwrap_run.go passes it).
func seccompFD(p place) int { return sharedFD + len(p.shared.files()) }

// bwrapPolicy is the seccomp filter of a command under bwrap: the keyring
// and inode metadata ioctls always; in plan mode also sockets, SysV IPC and
// message queues (the workspace is a read-only mount, so the metadata
// calls fail there anyway).
func bwrapPolicy(readOnly bool) seccompPolicy {
	if readOnly {
		return append(commandPolicy(), isolationSyscalls...)
	}
	return commandPolicy()
}

// covers are the hidden directories that would show through a bound
// directory (a data directory under /opt or an H9_SANDBOX_RO_PATHS entry).
func (s *sandbox) covers(roots []string) []string {
	var out []string
	for _, h := range s.view.hidden {
		if underAny(h, roots) {
			out = append(out, h)
		}
	}
	return out
}

// resolvConfBind shows the file /etc/resolv.conf points to when it lies
// outside the view (systemd-resolved keeps it under /run).
func resolvConfBind(roots []string) []string {
	target, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil || underAny(target, roots) {
		return nil
	}
	return []string{"--ro-bind", target, target}
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// procHostWide are the parts of a fresh /proc that act on the whole host,
// not the sandbox's pid namespace (Docker's read-only list). Under bwrap
// as root the sandbox's uid 0 is the host's, and writing a sysctl needs no
// capability, only that uid: bwrap leaves /proc/sys writable (the
// directory itself refuses writes, so it thinks it needs no cover), and
// kernel.core_pattern would then run a workspace program as host root.
var procHostWide = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs", "/proc/irq"}

// procReadOnly binds each of procHostWide that exists read-only onto itself.
func procReadOnly() []string {
	var a []string
	for _, p := range procHostWide {
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
		}
	}
	return a
}

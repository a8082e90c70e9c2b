package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
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

// startBwrap starts bwrap itself, without the launcher (a Go process
// start per command costs more than the whole hardening may). bwrap blocks
// before running the command (--block-fd) and reports its sandbox's first
// process (--info-fd); h9 then moves that process into the command's
// cgroup and sets its rlimits, which everything started later inherits, and
// lets it go. Reaping is the kernel's: the command runs as pid 1 of its own
// PID namespace (--as-pid-1), and when it ends, or bwrap is killed and takes
// it along (--die-with-parent), the kernel kills and reaps everything in the
// namespace before bwrap's wait for it returns. (With bwrap's own init as
// pid 1, bwrap exits as soon as the init reports the status, while the init
// is still emptying the namespace, and the init is left a zombie for the
// host's init to reap.)
func startBwrap(j *job, stdout, out *os.File) (*started, error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return nil, err
	}
	defer blockW.Close()
	filter, err := filledPipe(j.seccomp)
	if err != nil {
		infoW.Close()
		blockR.Close()
		return nil, err
	}
	defer filter.Close()
	cmd := &exec.Cmd{
		Path: j.spec.Argv[0], Args: j.spec.Argv, Env: j.env, Dir: j.spec.Dir,
		Stdout: stdout, Stderr: out, ExtraFiles: append(append([]*os.File{infoW, blockR}, j.shared.files()...), filter), // filter: seccompFD
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if j.stdio != nil {
		cmd.Stdin, cmd.Stdout = j.stdio.in, j.stdio.out
	}
	err = cmd.Start()
	infoW.Close()
	blockR.Close()
	if err != nil {
		return nil, err
	}
	exited := wait(cmd)
	s := &started{cmd: cmd, exited: exited, stop: func() { cmd.Process.Kill() }, status: func() error { return nil }}
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if json.NewDecoder(infoR).Decode(&info) != nil {
		// bwrap failed before the sandbox existed (its output says why), or
		// said something else: never let it run unconfined.
		cmd.Process.Kill()
		<-exited
		return s, nil
	}
	if err := confineBwrap(j, info.ChildPid); err != nil {
		cmd.Process.Kill()
		<-exited
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	blockW.Write([]byte{1}) // if bwrap is gone, the wait reports it
	return s, nil
}

// filledPipe is the read end of a pipe holding b (far less than a pipe's
// buffer), its write end closed.
func filledPipe(b []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(b)
	if err = errors.Join(err, w.Close()); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// confineBwrap puts the sandbox's first process in the cgroup (bwrap itself
// only waits) and gives it the file size limit and no core dumps.
func confineBwrap(j *job, childPid int) error {
	for _, dir := range j.spec.Cgroups {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(childPid)), 0); err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
	}
	limits := []struct {
		resource int
		value    uint64
	}{{unix.RLIMIT_FSIZE, uint64(j.spec.FileSize)}, {unix.RLIMIT_CORE, 0}}
	for _, l := range limits {
		lim := unix.Rlimit{Cur: l.value, Max: l.value}
		if err := unix.Prlimit(childPid, l.resource, &lim, nil); err != nil {
			return fmt.Errorf("setting rlimit %d: %w", l.resource, err)
		}
	}
	return nil
}

var errNoSpec = errors.New("empty launch spec")

func marshalSpec(s launchSpec) (string, error) {
	if len(s.Argv) == 0 {
		return "", errNoSpec
	}
	b, err := json.Marshal(s)
	return string(b), err
}

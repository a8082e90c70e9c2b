package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

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

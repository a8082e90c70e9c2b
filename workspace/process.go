package workspace

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"
)

// pipeGrace is how long output is still drained after the process group is
// gone; only a process that escaped the group (setsid) can hold it longer.
const pipeGrace = 2 * time.Second

type outcome struct {
	state     *os.ProcessState
	timedOut  bool
	cancelled bool
}

// runGroup runs cmd in a new process group with stdout+stderr into out. On
// timeout or ctx done the whole group is killed; once the leader exits the
// group is killed too, so background jobs never outlive the call. The
// leader is left unreaped until then so its pid, the group id, cannot be
// reused by an unrelated process.
func runGroup(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, out io.Writer) (outcome, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return outcome{}, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return outcome{}, err
	}
	pw.Close()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(out, pr)
	}()

	pid := cmd.Process.Pid
	var res outcome
	exited, killerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(killerDone)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-exited:
			return
		case <-t.C:
			res.timedOut = true
		case <-ctx.Done():
			res.cancelled = true
		}
		syscall.Kill(-pid, syscall.SIGKILL)
	}()

	werr := waitExitedNoReap(pid)
	if werr != nil {
		cmd.Wait() // fall back to an ordinary wait; the killer still runs
	}
	close(exited)
	<-killerDone
	syscall.Kill(-pid, syscall.SIGKILL)
	if werr == nil {
		cmd.Wait()
	}
	select {
	case <-drained:
	case <-time.After(pipeGrace):
		pr.Close() // unblocks the copy
		<-drained
	}
	pr.Close()
	res.state = cmd.ProcessState
	return res, nil
}

// waitExitedNoReap blocks until pid exits but leaves it a zombie (WNOWAIT).
func waitExitedNoReap(pid int) error {
	const (
		pPID    = 1
		wExited = 0x4
		wNoWait = 0x1000000
	)
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), wExited|wNoWait, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// exitCode follows the shell: the status, or 128+signal when killed.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

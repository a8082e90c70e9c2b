package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

const (
	// stopGrace is how long a stopped command's tree gets to go before h9
	// kills the process it started itself.
	stopGrace = 10 * time.Second
	// pipeGrace is how long output is still drained after that process is
	// gone; only a process that escaped it and its cgroup can hold the pipe
	// longer.
	pipeGrace = 2 * time.Second
	// selfExe is this program; exec of it survives the binary being replaced.
	selfExe = "/proc/self/exe"
)

type outcome struct {
	state     *os.ProcessState
	timedOut  bool
	cancelled bool
	memoryHit bool // the cgroup's OOM killer killed a process
	pidsHit   bool // a fork failed at the process limit
}

// started is a command h9 started: the process to wait for, and how to
// stop the whole tree below it.
type started struct {
	cmd    *exec.Cmd
	stop   func()
	exited chan struct{}
	status func() error // after exit: why the sandbox could not run the command, if so
}

// runJob starts j (bwrap directly, or the launcher) with the command's
// output into out and waits. On timeout or ctx's end it stops the tree, and
// kills the cgroup (when there is one) too.
func runJob(ctx context.Context, j *job, timeout time.Duration, out io.Writer) (outcome, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return outcome{}, err
	}
	defer outR.Close()
	stdoutR, stdoutW := outR, outW
	if j.stdout != nil {
		if stdoutR, stdoutW, err = os.Pipe(); err != nil {
			outW.Close()
			return outcome{}, err
		}
		defer stdoutR.Close()
	}
	sealInheritedFDs()
	var s *started
	if j.direct {
		// bwrap dies with the thread that started it (--die-with-parent is
		// PR_SET_PDEATHSIG): keep that thread for as long as bwrap runs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		s, err = startBwrap(j, stdoutW, outW)
	} else {
		s, err = startLauncher(j, stdoutW, outW)
	}
	outW.Close()
	stdoutW.Close()
	if err != nil {
		return outcome{}, err
	}
	drained := []chan struct{}{drain(out, outR)}
	if j.stdout != nil {
		drained = append(drained, drain(j.stdout, stdoutR))
	}
	res := waitOrStop(ctx, j, timeout, s)
	if j.cgroup != nil {
		// Whatever outlived the process h9 started is still in the cgroup.
		j.cgroup.kill()
	}
	grace := time.After(pipeGrace)
	for i, d := range drained {
		select {
		case <-d:
		case <-grace:
			outR.Close() // unblocks the copies
			stdoutR.Close()
			<-drained[i]
		}
	}
	if err := s.status(); err != nil {
		return outcome{}, err
	}
	res.state = s.cmd.ProcessState
	return res, nil
}

// drain copies r into w until EOF; after a failed write it keeps reading,
// so the command never blocks on a full pipe. The channel closes at EOF.
func drain(w io.Writer, r io.Reader) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := io.Copy(w, r); err != nil {
			io.Copy(io.Discard, r)
		}
	}()
	return done
}

func waitOrStop(ctx context.Context, j *job, timeout time.Duration, s *started) outcome {
	var res outcome
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.exited:
		return res
	case <-t.C:
		res.timedOut = true
	case <-ctx.Done():
		res.cancelled = true
	}
	s.stop()
	s.killRest(j)
	return res
}

// killRest makes sure a stopped command's whole tree is gone: its cgroup
// killed, then the process itself if it has not exited within stopGrace.
func (s *started) killRest(j *job) {
	if j.cgroup != nil {
		j.cgroup.kill()
	}
	select {
	case <-s.exited:
	case <-time.After(stopGrace):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// wait starts waiting for cmd; the channel closes when it has exited.
func wait(cmd *exec.Cmd) chan struct{} {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Wait()
	}()
	return exited
}

// startLauncher starts the launcher (launcher.go) for j. Its stdin is the
// control pipe: closing it stops everything; fd 3 carries its status.
func startLauncher(j *job, stdout, out *os.File) (*started, error) {
	j.spec.Stdio = j.stdio != nil
	arg, err := marshalSpec(j.spec)
	if err != nil {
		return nil, err
	}
	controlR, controlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		controlR.Close()
		controlW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: selfExe, Args: []string{launcherName, arg},
		Env: append(j.env, launcherEnv+"=1"), Dir: j.spec.Dir,
		Stdin: controlR, Stdout: stdout, Stderr: out, ExtraFiles: []*os.File{statusW},
		// Its own process group: a Ctrl-C meant for h9 does not reach it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if j.stdio != nil {
		cmd.Stdout, cmd.ExtraFiles = j.stdio.out, append(cmd.ExtraFiles, j.stdio.in) // fd 4: stdioInFD
	}
	err = cmd.Start()
	controlR.Close()
	statusW.Close()
	if err != nil {
		controlW.Close()
		statusR.Close()
		return nil, err
	}
	return &started{
		cmd: cmd, exited: wait(cmd),
		stop: func() { controlW.Close() },
		status: func() error {
			controlW.Close()
			defer statusR.Close()
			b, _ := io.ReadAll(statusR)
			if msg, failed := strings.CutPrefix(strings.TrimSpace(string(b)), "error: "); failed {
				return fmt.Errorf("sandbox: %s", msg)
			}
			return nil
		},
	}, nil
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

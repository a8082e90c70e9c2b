package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// stopGrace is how long the launcher gets to kill its tree after a stop
	// before h9 kills the launcher itself.
	stopGrace = 10 * time.Second
	// pipeGrace is how long output is still drained after the launcher is
	// gone; only a process that escaped it can hold the pipe longer.
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

// runJob starts the launcher for j, with the command's output into out, and
// waits. On timeout or ctx's end it stops the command: closing the
// launcher's stdin makes the launcher kill its whole tree, and the cgroup
// (when there is one) is killed too.
func runJob(ctx context.Context, j *job, timeout time.Duration, out io.Writer) (outcome, error) {
	arg, err := json.Marshal(j.spec)
	if err != nil {
		return outcome{}, err
	}
	pipes, err := newLaunchPipes()
	if err != nil {
		return outcome{}, err
	}
	defer pipes.close()
	cmd := &exec.Cmd{
		Path: selfExe, Args: []string{launcherName, string(arg)},
		Env: append(j.env, launcherEnv+"=1"), Dir: j.spec.Dir,
		Stdin: pipes.controlR, Stdout: pipes.outW, Stderr: pipes.outW,
		ExtraFiles: []*os.File{pipes.statusW},
		// Its own process group: a Ctrl-C meant for h9 does not reach it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		return outcome{}, err
	}
	pipes.closeChildEnds()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(out, pipes.outR)
	}()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Wait()
	}()
	res := waitOrStop(ctx, j, timeout, cmd, exited, pipes)
	if j.cgroup != nil {
		// Whatever outlived a killed launcher is still in the cgroup.
		j.cgroup.kill()
	}
	status, _ := io.ReadAll(pipes.statusR)
	select {
	case <-drained:
	case <-time.After(pipeGrace):
		pipes.outR.Close() // unblocks the copy
		<-drained
	}
	if msg, failed := strings.CutPrefix(strings.TrimSpace(string(status)), "error: "); failed {
		return outcome{}, fmt.Errorf("sandbox: %s", msg)
	}
	res.state = cmd.ProcessState
	return res, nil
}

func waitOrStop(ctx context.Context, j *job, timeout time.Duration, cmd *exec.Cmd, exited <-chan struct{}, p *launchPipes) outcome {
	var res outcome
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-exited:
		return res
	case <-t.C:
		res.timedOut = true
	case <-ctx.Done():
		res.cancelled = true
	}
	p.controlW.Close()
	if j.cgroup != nil {
		j.cgroup.kill()
	}
	select {
	case <-exited:
	case <-time.After(stopGrace):
		cmd.Process.Kill()
		<-exited
	}
	return res
}

// launchPipes: the command's output, the control pipe (the launcher's
// stdin; closing it stops everything) and the launcher's status line.
type launchPipes struct {
	outR, outW, controlR, controlW, statusR, statusW *os.File
}

func newLaunchPipes() (*launchPipes, error) {
	var p launchPipes
	var errs []error
	for _, pair := range [][2]**os.File{{&p.outR, &p.outW}, {&p.controlR, &p.controlW}, {&p.statusR, &p.statusW}} {
		r, w, err := os.Pipe()
		errs = append(errs, err)
		*pair[0], *pair[1] = r, w
	}
	if err := errors.Join(errs...); err != nil {
		p.close()
		return nil, err
	}
	return &p, nil
}

// closeChildEnds drops h9's copies of the launcher's ends, so EOFs arrive.
func (p *launchPipes) closeChildEnds() {
	p.outW.Close()
	p.controlR.Close()
	p.statusW.Close()
}

func (p *launchPipes) close() {
	for _, f := range []*os.File{p.outR, p.outW, p.controlR, p.controlW, p.statusR, p.statusW} {
		if f != nil {
			f.Close()
		}
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

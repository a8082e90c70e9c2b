package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
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

// maxStdioStderr is how much of a stdio process's stderr is kept, to say
// why it failed.
const maxStdioStderr = 4 << 10

// stdioFiles are the child's ends of a stdio process's pipes.
type stdioFiles struct{ in, out *os.File }

// StdioOptions tune a stdio process.
type StdioOptions struct {
	ReadOnly bool // plan mode: the workspace is bound read-only
}

// StdioProcess is a command started in the sandbox like Bash's (the same
// view, environment without secrets, network namespace, cgroup limits),
// whose stdin and stdout stay open for a protocol (an MCP stdio server).
// It runs until Stop or until it exits.
type StdioProcess struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser

	done     chan struct{} // closed once the process has exited and been cleaned up
	stopOnce sync.Once
	stop     chan struct{}
	mu       sync.Mutex
	stderr   *headTail
}

// StartStdio starts `bash -c command` in the workspace's sandbox with its
// stdin and stdout as pipes (stderr is kept, capped, for Stderr). Under
// bwrap its PID namespace ends the tree; in the other modes the launcher
// does, as it does for any command: a subreaper that kills everything
// below it when h9 closes its control pipe or dies.
func (w *Workspace) StartStdio(command string, opts StdioOptions) (*StdioProcess, error) {
	if w.isClosed() {
		return nil, ErrClosed
	}
	if err := checkCommand(command); err != nil {
		return nil, err
	}
	j, err := w.sandbox.prepare(place{dir: w.dir, home: w.home, readOnly: opts.ReadOnly}, command)
	if err != nil {
		return nil, err
	}
	p, err := startStdio(j)
	if err != nil {
		j.cleanup()
		return nil, err
	}
	return p, nil
}

// startStdio owns j from here: a goroutine (serve) holds the process
// until it exits or is stopped, then kills what is left and cleans j up.
func startStdio(j *job) (*StdioProcess, error) {
	pipes, err := newPipes(3)
	if err != nil {
		return nil, err
	}
	inR, inW, outR, outW, errR, errW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	j.stdio = &stdioFiles{in: inR, out: outW}
	p := &StdioProcess{Stdin: inW, Stdout: outR, done: make(chan struct{}), stop: make(chan struct{}), stderr: newHeadTail(maxStdioStderr)}
	ready := make(chan error, 1)
	go p.serve(j, []*os.File{inR, outW, errW}, errR, ready)
	if err := <-ready; err != nil {
		inW.Close()
		outR.Close()
		<-p.done
		return nil, err
	}
	return p, nil
}

// serve starts the process with the child's ends of its pipes (closed
// here once it has them), says on ready whether it started, and holds it.
func (p *StdioProcess) serve(j *job, childEnds []*os.File, errR *os.File, ready chan<- error) {
	defer close(p.done)
	defer j.cleanup()
	if j.direct {
		// bwrap dies with the thread that started it (--die-with-parent):
		// keep that thread for as long as bwrap runs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	sealInheritedFDs()
	start := startLauncher
	if j.direct {
		start = startBwrap
	}
	s, err := start(j, nil, childEnds[2])
	for _, f := range childEnds {
		f.Close()
	}
	ready <- err
	if err != nil {
		errR.Close()
		return
	}
	drained := make(chan struct{})
	go func() { defer close(drained); io.Copy(p.stderrWriter(), errR) }()
	p.hold(j, s)
	errR.Close()
	<-drained
	if err := s.status(); err != nil {
		fmt.Fprintf(p.stderrWriter(), "\n%v\n", err) // the launcher could not start the command: why
	}
}

// hold waits for the process to exit or be stopped, then makes sure the
// whole tree is gone.
func (p *StdioProcess) hold(j *job, s *started) {
	select {
	case <-s.exited:
	case <-p.stop:
		s.stop()
	}
	s.killRest(j)
}

func newPipes(n int) ([]*os.File, error) {
	var files []*os.File
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, err
		}
		files = append(files, r, w)
	}
	return files, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *StdioProcess) stderrWriter() io.Writer { return lockedWriter{&p.mu, p.stderr} }

// Stderr is the head and tail of what the process wrote to stderr.
func (p *StdioProcess) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Done is closed once the process and everything it started are gone.
func (p *StdioProcess) Done() <-chan struct{} { return p.done }

// Stop kills the process and its tree and waits until they are gone.
func (p *StdioProcess) Stop() {
	p.stopOnce.Do(func() { close(p.stop) })
	p.Stdin.Close()
	<-p.done
	p.Stdout.Close()
}

// String names the process for errors.
func (p *StdioProcess) String() string { return fmt.Sprintf("stdio process (stderr: %q)", p.Stderr()) }

package workspace

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

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

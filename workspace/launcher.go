package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Without bwrap every command runs under a launcher: this same program,
// re-executed as "h9-sandbox" (see init). The launcher joins the command's
// cgroups, sets its rlimits, becomes a child subreaper, confines the command
// in plan mode and starts it; when the command returns, or h9 closes the
// launcher's stdin, or h9 dies, it kills every process left below it. h9
// itself never takes on any of these restrictions. (Under bwrap, h9 starts
// bwrap directly: bwrap_run.go.)
const (
	launcherName = "h9-sandbox"
	launcherEnv  = "H9_INTERNAL_SANDBOX_LAUNCHER" // "1" in the launcher's environment only
	// launchFailed is the launcher's exit code when it could not start the
	// command; its status pipe then says why.
	launchFailed = 125
)

// launchSpec is what h9 hands the launcher, as JSON in its only argument.
// Its stdin is the control pipe (EOF = stop everything), stdout and stderr
// go to the command, fd 3 is the status pipe ("ok" or "error: …").
type launchSpec struct {
	Argv     []string     // absolute program path first (under bwrap: bwrap and its arguments)
	Dir      string       // working directory
	Cgroups  []string     // cgroup directories to join before anything runs
	FileSize int64        // RLIMIT_FSIZE; 0 leaves it alone
	Confine  *confinement // restrictions for the command only; nil under bwrap
	// ScopeSignals puts an unconfined command in a signal scope, so it
	// cannot kill the launcher (scope.go).
	ScopeSignals bool
	// Stdio: the command's stdin is the launcher's fd 4 (a stdio server's
	// requests, process_stdio.go), not /dev/null.
	Stdio bool
}

// stdioInFD is the launcher's descriptor of a stdio command's stdin.
const stdioInFD = 4

// init turns this process into the launcher when h9 started it as one.
// Doing it in init, not through a hook in main, means no program that
// imports workspace can forget it, tests included, and the launcher runs
// before any other package of the program is initialised.
func init() {
	if os.Getenv(launcherEnv) != "1" || len(os.Args) != 2 || filepath.Base(os.Args[0]) != launcherName {
		return
	}
	// syscall.Exit, not os.Exit: nothing is left to flush, and a binary
	// built with -race would otherwise sleep a second at exit.
	syscall.Exit(launch(os.Args[1]))
}

func launch(arg string) int {
	sealInheritedFDs() // the status pipe (fd 3) and anything else: the command must not hold them
	status := os.NewFile(3, "status")
	fail := func(err error) int {
		fmt.Fprintf(status, "error: %v\n", err)
		return launchFailed
	}
	var spec launchSpec
	if err := json.Unmarshal([]byte(arg), &spec); err != nil || len(spec.Argv) == 0 {
		return fail(fmt.Errorf("bad launch spec: %v", err))
	}
	if err := prepareLauncher(spec); err != nil {
		return fail(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	child, err := startCommand(spec)
	if err != nil {
		return fail(err)
	}
	io.WriteString(status, "ok\n")
	status.Close()
	go func() {
		io.Copy(io.Discard, os.Stdin) // returns when h9 closes the pipe or dies
		stop <- syscall.SIGKILL
	}()
	return supervise(child, stop)
}

// prepareLauncher does what the command inherits: cgroups first, so that
// everything started later is counted, then rlimits and the subreaper role.
func prepareLauncher(spec launchSpec) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, dir := range spec.Cgroups {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0); err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
	}
	if spec.FileSize > 0 {
		lim := &unix.Rlimit{Cur: uint64(spec.FileSize), Max: uint64(spec.FileSize)}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, lim); err != nil {
			return fmt.Errorf("setting the file size limit: %w", err)
		}
	}
	// A core dump could be as large as the command's memory, in the workspace.
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("disabling core dumps: %w", err)
	}
	// Orphans (setsid, double fork) are re-parented here, not to init.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a subreaper: %w", err)
	}
	return nil
}

// startCommand starts the command with /dev/null as stdin (a stdio
// command: the pipe of its requests) and the launcher's environment
// without the launcher's own marker.
func startCommand(spec launchSpec) (*os.Process, error) {
	stdin, err := commandStdin(spec)
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) < len(launcherEnv)+1 || kv[:len(launcherEnv)+1] != launcherEnv+"=" {
			env = append(env, kv)
		}
	}
	attr := &os.ProcAttr{Dir: spec.Dir, Env: env, Files: []*os.File{stdin, os.Stdout, os.Stderr}}
	switch {
	case spec.Confine != nil:
		return startConfined(spec.Confine, spec.Argv, attr)
	}
	return startScoped(spec.ScopeSignals, spec.Argv, attr)
}

func commandStdin(spec launchSpec) (*os.File, error) {
	if spec.Stdio {
		return os.NewFile(stdioInFD, "stdio-in"), nil
	}
	return os.Open(os.DevNull)
}

// supervise waits for the command or a stop, then kills what is left.
// The exit code follows the shell: the status, or 128+signal.
func supervise(child *os.Process, stop <-chan os.Signal) int {
	exited := make(chan int, 1)
	go func() {
		st, err := child.Wait()
		if err != nil {
			exited <- launchFailed
			return
		}
		exited <- shellCode(st)
	}()
	var code int
	select {
	case code = <-exited:
	case <-stop:
		child.Kill()
		code = <-exited
	}
	killDescendants()
	return code
}

func shellCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// killDescendants kills every process below this one and reaps them. As a
// child subreaper this process inherits every orphan of its tree, so when
// it has no children left it has no descendants left: nothing escapes by
// setsid or a double fork. Processes forked while it kills are caught in the
// next round, once their parents are dead and they are re-parented here.
func killDescendants() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR || pid > 0:
			continue
		case err != nil: // ECHILD: none left
			return
		}
		for _, p := range descendants(os.Getpid()) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if _, err := syscall.Wait4(-1, nil, 0, nil); err != nil && err != syscall.EINTR {
			return
		}
	}
}

// descendants lists the processes below root, from the parent links in
// /proc/<pid>/stat (this kernel may lack /proc/<pid>/task/<tid>/children).
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the fourth field of /proc/<pid>/stat; the second, the
// command name in parentheses, may itself contain spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

// sealInheritedFDs marks every descriptor of h9 from 3 up close-on-exec,
// so none reaches a command but the ones a start hands over on purpose
// (os/exec dups those into the child). Go opens its own files that way;
// this catches what h9 inherited without it, from a supervisor, a shell's
// redirect or socket activation: such a descriptor would let a command
// read a file its view hides. Only a flag changes, so it is safe while
// other goroutines use their files.
func sealInheritedFDs() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

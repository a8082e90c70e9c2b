package workspace

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/h9-app/h9/workspace/egress"
)

// A command with network runs under a forwarder: this same program,
// bound into the sandbox as /.h9/h9-egress (see init). As the sandbox's
// first process it listens on the namespace's loopback, hands every
// connection's socket to h9's proxy (it copies no bytes), starts the
// command, reaps whatever is orphaned below it and exits with the
// command's status; the kernel then ends everything left in the namespace.
const (
	forwarderName = "h9-egress"
	forwarderEnv  = "H9_INTERNAL_EGRESS_FORWARDER" // "1" in the forwarder's environment only
)

func init() {
	if os.Getenv(forwarderEnv) != "1" || len(os.Args) < 2 || filepath.Base(os.Args[0]) != forwarderName {
		return
	}
	syscall.Exit(forward(os.Args[1:]))
}

func forward(argv []string) int {
	ln, err := net.Listen("tcp", egressListen)
	if err != nil {
		os.Stderr.WriteString("h9: the network forwarder could not listen: " + err.Error() + "\n")
		return launchFailed
	}
	go serveForwarder(ln)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, forwarderEnv+"=") {
			env = append(env, kv)
		}
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Stderr.WriteString("h9: starting the command: " + err.Error() + "\n")
		return launchFailed
	}
	return reapUntil(pid)
}

// reapUntil waits for every child (orphans come here, as to any pid 1)
// and returns the command's exit status once it ends.
func reapUntil(pid int) int {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return launchFailed
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

func serveForwarder(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go forwardConn(c)
	}
}

// forwardConn hands one client connection to the proxy: its socket goes
// over the unix socket (egress.PassMarker with SCM_RIGHTS) and the proxy
// serves it directly, so no byte passes through this process.
func forwardConn(c net.Conn) {
	defer c.Close()
	up, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: egressSocket, Net: "unix"})
	if err == nil {
		defer up.Close()
		err = passSocket(up, c.(*net.TCPConn))
	}
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 32\r\n\r\nh9: the network proxy is gone.\r\n")
		return
	}
	port := c.RemoteAddr().(*net.TCPAddr).Port
	c.Close() // the proxy holds the socket now
	answerWho(up, port)
}

// passSocket sends c's descriptor to the proxy; the kernel keeps the
// socket open for it once this process closes its own.
func passSocket(up *net.UnixConn, c *net.TCPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	err = rc.Control(func(fd uintptr) {
		_, _, sendErr = up.WriteMsgUnix([]byte{egress.PassMarker}, syscall.UnixRights(int(fd)), nil)
	})
	if err != nil {
		return err
	}
	return sendErr
}

// answerWho waits for the proxy's one question about a passed connection
// (it asks only when it refuses a host) and answers with the words of the
// process that opened it, found through this namespace's /proc: the
// thread then reads `go mod download` tried to reach …, not the whole
// command line. No question: the proxy closed the connection.
func answerWho(up *net.UnixConn, port int) {
	q := make([]byte, 1)
	if n, _ := up.Read(q); n != 1 || q[0] != egress.WhoAsk {
		return
	}
	up.Write([]byte(commandOf(port) + "\n"))
}

// maxWords bounds the answer (the proxy reads 512 bytes).
const maxWords = 400

// commandOf is the command line of the process owning the client end of
// the connection from 127.0.0.1:port to the forwarder, "" if none is found.
func commandOf(port int) string {
	inode := clientInode(port)
	if inode == "" {
		return ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		if filepath.Base(p) == self || !ownsSocket(p, inode) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		words := strings.Join(strings.Fields(strings.ReplaceAll(string(raw), "\x00", " ")), " ")
		if len(words) > maxWords {
			words = words[:maxWords]
		}
		return words
	}
	return ""
}

// clientInode finds the socket whose local port is port and whose peer
// is the forwarder's, in /proc/net/tcp and tcp6.
func clientInode(port int) string {
	local, peer := ":"+strings.ToUpper(strconv.FormatInt(int64(port), 16)), ":"+strings.ToUpper(strconv.FormatInt(int64(egressPort), 16))
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && portOf(fields[1]) == local && portOf(fields[2]) == peer {
				f.Close()
				return fields[9]
			}
		}
		f.Close()
	}
	return ""
}

// portOf is the ":PPPP" of a /proc/net/tcp address, leading zeros kept as
// the table writes them (four hex digits).
func portOf(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return ""
	}
	p, err := strconv.ParseInt(addr[i+1:], 16, 32)
	if err != nil {
		return ""
	}
	return ":" + strings.ToUpper(strconv.FormatInt(p, 16))
}

// ownsSocket: one of process p's descriptors is the socket inode.
func ownsSocket(p, inode string) bool {
	fds, err := os.ReadDir(filepath.Join(p, "fd"))
	if err != nil {
		return false
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && l == want {
			return true
		}
	}
	return false
}

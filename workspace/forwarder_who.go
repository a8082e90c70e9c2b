package workspace

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/h9-app/h9/workspace/egress"
)

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

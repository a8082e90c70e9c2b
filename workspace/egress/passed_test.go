package egress_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/egress"
)

// pass sends fd over the proxy socket c with the forwarder's marker.
func pass(t *testing.T, c net.Conn, fd int) {
	t.Helper()
	if _, _, err := c.(*net.UnixConn).WriteMsgUnix([]byte{egress.PassMarker}, syscall.UnixRights(fd), nil); err != nil {
		t.Fatal(err)
	}
}

// tcpPair is both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// passConn passes c to the proxy over up and closes this process's
// copies, as the forwarder does: the proxy then holds the only one.
func passConn(t *testing.T, up net.Conn, c *net.TCPConn) {
	t.Helper()
	f, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	pass(t, up, int(f.Fd()))
	f.Close()
	c.Close()
	up.Close()
}

// The forwarder's way: a client's TCP socket passed over the unix socket
// is served by the proxy itself, refusals and the header timeout included.
func TestPassedSocketIsServed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	t.Cleanup(srv.Close)
	port := serverPort(srv)
	r := newRig(t, []string{"app.test", "127.0.0.1"}, fakeDNS{"app.test": loopback}, func(c *egress.Config) { c.HeaderTimeout = 500 * time.Millisecond })
	for _, tc := range []struct{ host, want string }{{"app.test", "hello from app.test:" + port}, {"other.test", "h9 refused other.test:" + port}} {
		up, done := dialProxy(t, r, "curl "+tc.host)
		client, server := tcpPair(t)
		passConn(t, up, server)
		_, body := roundTrip(t, client, "GET http://"+tc.host+":"+port+"/ HTTP/1.1\r\nHost: "+tc.host+"\r\n\r\n")
		if !strings.Contains(body, tc.want) {
			t.Errorf("%s: %q, want %q", tc.host, body, tc.want)
		}
		done()
	}

	up, done := dialProxy(t, r, "slow")
	defer done()
	client, server := tcpPair(t)
	passConn(t, up, server)
	io.WriteString(client, "GET http://app.test/ HTTP/1.1\r\n")
	client.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(client); err != nil {
		t.Errorf("a slow passed client was not cut off: %v", err)
	}
}

// Whatever else comes with the marker (a pipe, a listening socket, two
// descriptors) is closed, never served, and the proxy goes on.
func TestPassedNonSocketsAreRefused(t *testing.T) {
	r := newRig(t, []string{"app.test"}, fakeDNS{}, nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	for name, fds := range map[string][]int{"pipe": {int(pw.Fd())}, "listener": {int(lf.Fd())}, "two": {int(pw.Fd()), int(lf.Fd())}} {
		up, done := dialProxy(t, r, name)
		if _, _, err := up.(*net.UnixConn).WriteMsgUnix([]byte{egress.PassMarker}, syscall.UnixRights(fds...), nil); err != nil {
			t.Fatal(err)
		}
		up.SetReadDeadline(time.Now().Add(30 * time.Second))
		if out, err := io.ReadAll(up); err != nil || strings.Contains(string(out), "200") {
			t.Errorf("%s: %q %v", name, out, err)
		}
		done()
	}
	pw.Close()
	if n, _ := pr.Read(make([]byte, 1)); n != 0 {
		t.Error("the proxy wrote into a passed pipe")
	}
	c, done := dialProxy(t, r, "after")
	defer done()
	if resp, _ := roundTrip(t, c, "GET http://1.2.3.4/ HTTP/1.1\r\nHost: 1.2.3.4\r\n\r\n"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("after the bad passes: %d", resp.StatusCode)
	}
}

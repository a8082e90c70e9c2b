package egress

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// The in-sandbox forwarder does not copy bytes: it hands the proxy each
// client's TCP socket over the unix socket (one zero byte carrying the
// descriptor, SCM_RIGHTS), and the proxy serves that socket itself. Bytes
// then take one hop, server to proxy to client, TCP to TCP (copy.go), as
// through any proxy (BENCHMARKS.md, issue 21). A client that speaks HTTP
// on the unix socket directly is served as before.

// PassMarker is the byte the forwarder sends with a socket.
const PassMarker = 0

// passedConn is a unix connection that may turn, on its first read, into
// the TCP socket its first message carried. Deadlines set before the turn
// carry over.
type passedConn struct {
	unix *net.UnixConn

	mu        sync.Mutex
	conn      net.Conn // unix, or the passed socket
	turned    bool     // the first message was read
	early     []byte   // a first byte that carried no socket: data
	rdl, wrdl time.Time
	closed    bool
	passed    bool // the forwarder passed conn
	asked     bool // who asked
}

func newPassedConn(u *net.UnixConn) *passedConn { return &passedConn{unix: u, conn: u} }

func (p *passedConn) current() net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn
}

func (p *passedConn) Read(b []byte) (int, error) {
	p.mu.Lock()
	if !p.turned {
		p.turned = true
		p.mu.Unlock()
		if err := p.turn(); err != nil {
			return 0, err
		}
		p.mu.Lock()
	}
	if len(p.early) > 0 {
		n := copy(b, p.early)
		p.early = p.early[n:]
		p.mu.Unlock()
		return n, nil
	}
	c := p.conn
	p.mu.Unlock()
	return c.Read(b)
}

// turn reads the first message: a marker with one stream socket makes
// that socket the connection; anything else is the client's first byte.
func (p *passedConn) turn() error {
	buf, oob := make([]byte, 1), make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := p.unix.ReadMsgUnix(buf, oob)
	fds := parseRights(oob[:oobn])
	if err != nil && n == 0 {
		closeAll(fds)
		return err
	}
	if n == 1 && buf[0] == PassMarker && len(fds) == 1 {
		c, err := tcpFromFD(fds[0])
		if err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			c.Close()
			return net.ErrClosed
		}
		c.SetReadDeadline(p.rdl)
		c.SetWriteDeadline(p.wrdl)
		p.conn = c
		p.passed = true // the unix socket stays open: who may ask on it
		return nil
	}
	closeAll(fds) // not the forwarder's: descriptors without the marker, or several
	if n == 1 && buf[0] == PassMarker {
		return errors.New("egress: a marker without one socket")
	}
	p.mu.Lock()
	p.early = buf[:n]
	p.mu.Unlock()
	return nil
}

// tcpFromFD takes a passed descriptor as a TCP connection, refusing
// anything else (a file, a pipe, a listening socket).
func tcpFromFD(fd int) (*net.TCPConn, error) {
	f := os.NewFile(uintptr(fd), "passed socket")
	defer f.Close()
	if acc, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN); err != nil || acc != 0 {
		return nil, errors.New("egress: the passed descriptor is not a connected socket")
	}
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("egress: the passed descriptor: %w", err)
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, errors.New("egress: the passed descriptor is not a TCP connection")
	}
	return tc, nil
}

func parseRights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// pending: a byte read on the first turn is not yet given.
func (p *passedConn) pending() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.early) > 0
}

func (p *passedConn) Write(b []byte) (int, error) { return p.current().Write(b) }

func (p *passedConn) Close() error {
	p.mu.Lock()
	p.closed = true
	c := p.conn
	p.mu.Unlock()
	err := p.unix.Close()
	if c != net.Conn(p.unix) {
		err = c.Close()
	}
	return err
}

func (p *passedConn) LocalAddr() net.Addr  { return p.current().LocalAddr() }
func (p *passedConn) RemoteAddr() net.Addr { return p.current().RemoteAddr() }

func (p *passedConn) SetDeadline(t time.Time) error {
	p.SetReadDeadline(t)
	return p.SetWriteDeadline(t)
}

func (p *passedConn) SetReadDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rdl = t
	p.unix.SetReadDeadline(t) // the first read waits on the unix socket
	return p.conn.SetReadDeadline(t)
}

func (p *passedConn) SetWriteDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wrdl = t
	return p.conn.SetWriteDeadline(t)
}

// CloseWrite half-closes the connection in use (a tunnel's end).
func (p *passedConn) CloseWrite() error {
	if cw, ok := p.current().(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

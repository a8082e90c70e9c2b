package workspace

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// bareRelay is the least any CONNECT relay does, with none of h9's
// proxy around it (no policy, guard or accounting): read the request,
// dial, answer 200 and copy both ways. Its speed is the floor for a
// third process copying every byte, which the proxy's own variants are
// read against. spliced copies with io.Copy between the two TCP
// sockets, which Go turns into splice(2); otherwise read(2) and write(2)
// through a 1 MiB buffer.
func bareRelay(b *testing.B, spliced bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relayOne(c.(*net.TCPConn), spliced)
		}
	}()
	return ln.Addr().String()
}

func relayOne(c *net.TCPConn, spliced bool) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c)) // curl sends nothing more before the 200
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	up, err := net.Dial("tcp", req.Host)
	if err != nil {
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		relayCopy(up.(*net.TCPConn), c, spliced)
		close(done)
	}()
	relayCopy(c, up.(*net.TCPConn), spliced)
	<-done
}

// relayCopy copies src to dst, then half-closes dst.
func relayCopy(dst, src *net.TCPConn, spliced bool) {
	if spliced {
		io.Copy(dst, src)
	} else {
		// The wrappers hide ReadFrom and WriteTo, so no splice happens.
		io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 1<<20))
	}
	dst.CloseWrite()
}

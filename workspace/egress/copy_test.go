package egress

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
)

func loopbackPair(t *testing.T) (net.Conn, net.Conn) {
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
	return c, s
}

// copyConn delivers every byte in order and ends at the source's end; a
// tunnel waiting for data holds no large buffer.
func TestCopyConnDeliversAndHoldsNothingIdle(t *testing.T) {
	srcW, srcR := loopbackPair(t)
	dstW, dstR := loopbackPair(t)
	_, idleR := loopbackPair(t)
	go copyConn(io.Discard, idleR) // never gets a byte
	data := make([]byte, 5<<20+123)
	rand.Read(data)
	go func() { srcW.Write(data); srcW.Close() }()
	done := make(chan error, 1)
	go func() { done <- copyConn(dstW, srcR); dstW.Close() }()
	got, err := io.ReadAll(dstR)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copied %d of %d bytes, equal %t, %v", len(got), len(data), bytes.Equal(got, data), err)
	}
	if err := <-done; err != nil {
		t.Errorf("copyConn at the end of its source: %v", err)
	}
	if n := len(bigInUse); n != 0 {
		t.Errorf("%d large buffers held with only an idle copy left", n)
	}
}

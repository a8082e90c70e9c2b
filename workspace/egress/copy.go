package egress

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
)

// A tunnel's bytes are copied through large pooled buffers rather than
// spliced: on loopback, read(2) and write(2) of 1 MiB at a time cost the
// proxy about half the CPU splice(2) does (BENCHMARKS.md, issue 21). A
// buffer is taken only once the source has data and given back after the
// write, so an idle tunnel holds none: 1,000 open tunnels stay small. At
// most maxBigBuffers are in use at once (32 MiB, however many tunnels a
// command streams through); past that a copy makes do with 32 KiB.
const (
	bigBufferSize   = 1 << 20
	smallBufferSize = 32 << 10
	maxBigBuffers   = 32
)

var (
	bigPool   = sync.Pool{New: func() any { b := make([]byte, bigBufferSize); return &b }}
	smallPool = sync.Pool{New: func() any { b := make([]byte, smallBufferSize); return &b }}
	bigInUse  = make(chan struct{}, maxBigBuffers)
)

func getBuffer() *[]byte {
	select {
	case bigInUse <- struct{}{}:
		return bigPool.Get().(*[]byte)
	default:
		return smallPool.Get().(*[]byte)
	}
}

func putBuffer(b *[]byte) {
	if len(*b) == bigBufferSize {
		bigPool.Put(b)
		<-bigInUse
		return
	}
	smallPool.Put(b)
}

// copyConn copies src to dst until src ends or either fails.
func copyConn(dst io.Writer, src net.Conn) error {
	sc, ok := src.(syscall.Conn)
	if !ok {
		_, err := io.Copy(dst, src)
		return err
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	for {
		buf, n, rerr := readReady(rc)
		if n > 0 {
			_, werr := dst.Write((*buf)[:n])
			putBuffer(buf)
			if werr != nil {
				return werr
			}
			continue
		}
		if buf != nil {
			putBuffer(buf)
		}
		if rerr == nil || errors.Is(rerr, io.EOF) {
			return nil
		}
		return rerr
	}
}

// readReady waits until src is readable, then reads into a pooled
// buffer; n 0 with a nil error is the end of the stream.
func readReady(rc syscall.RawConn) (buf *[]byte, n int, err error) {
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		b := getBuffer()
		for {
			n, rerr = syscall.Read(int(fd), *b)
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			putBuffer(b)
			return false // wait for data, holding no buffer
		}
		buf = b
		return true
	})
	if n < 0 {
		n = 0
	}
	if err == nil {
		err = rerr
	}
	return buf, n, err
}

package egress

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// The thread is told which process tried a refused host. The proxy asks
// the forwarder on the unix socket that passed the connection (WhoAsk);
// the forwarder answers with the words of the connection's owner and a
// newline (workspace/forwarder_who.go).
const (
	WhoAsk     = '?'
	maxWho     = 512 // bytes of an answer read
	whoTimeout = time.Second
)

// who asks the forwarder which process opened the passed connection: its
// words, or "" (no forwarder, no answer in time, asked before). The
// sandbox answers, so the words are only ever shown, quoted.
func (p *passedConn) who() string {
	p.mu.Lock()
	if !p.passed || p.asked || p.closed {
		p.mu.Unlock()
		return ""
	}
	p.asked = true
	p.mu.Unlock()
	p.unix.SetDeadline(time.Now().Add(whoTimeout))
	if _, err := p.unix.Write([]byte{WhoAsk}); err != nil {
		return ""
	}
	buf := make([]byte, maxWho)
	n, _ := io.ReadFull(p.unix, buf)
	words, _, _ := strings.Cut(string(buf[:n]), "\n")
	return strings.TrimSpace(strings.ToValidUTF8(words, ""))
}

type connKey struct{}

// withConn keeps a request's connection in its context (http.Server's
// ConnContext), for whoOf.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// whoOf is the words of the process that sent r, "" when unknown.
func whoOf(r *http.Request) string {
	sc, _ := r.Context().Value(connKey{}).(*slotConn)
	if sc == nil {
		return ""
	}
	pc, _ := sc.Conn.(*passedConn)
	if pc == nil {
		return ""
	}
	return pc.who()
}

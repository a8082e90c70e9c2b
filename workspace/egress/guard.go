package egress

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
)

// headerGuard reads a connection's (only) request header before net/http
// does and refuses framing that a server behind h9 could read otherwise
// than h9: obs-fold, Content-Length with Transfer-Encoding, two
// Content-Lengths. net/http would quietly fold or drop them; h9 answers
// 400 instead. Keep-alive is off, so one header per connection is all.
type headerGuard struct {
	net.Conn
	head    []byte // the header read ahead, then what is left of it to give
	checked bool
	err     error
}

const maxHeader = 64 << 10

var errSmuggling = errors.New("ambiguous request framing")

func (g *headerGuard) Read(p []byte) (int, error) {
	if !g.checked {
		g.checked = true
		g.err = g.readHead()
	}
	if len(g.head) > 0 {
		n := copy(p, g.head)
		g.head = g.head[n:]
		return n, nil
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.Conn.Read(p)
}

// readHead reads up to the end of the header and checks it; a bad one is
// answered here and the connection ends.
func (g *headerGuard) readHead() error {
	buf := make([]byte, 0, 4096)
	for !bytes.Contains(buf, []byte("\r\n\r\n")) && !bytes.Contains(buf, []byte("\n\n")) {
		if len(buf) >= maxHeader {
			g.head = buf // net/http answers 431
			return nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := g.Conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			g.head = buf
			return err
		}
	}
	if why := ambiguous(buf); why != "" {
		body := "h9 proxy: " + why + "\n"
		io.WriteString(g.Conn, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		return errSmuggling
	}
	g.head = buf
	return nil
}

// ambiguous names what is wrong with a raw header, or "".
func ambiguous(raw []byte) string {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(raw)
	}
	lines := bytes.Split(bytes.ReplaceAll(raw[:end], []byte("\r\n"), []byte("\n")), []byte("\n"))
	cl, te := 0, 0
	for i, l := range lines {
		if i == 0 {
			continue
		}
		if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') {
			return "a folded header line (obs-fold)"
		}
		name, _, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		if bytes.ContainsAny(name, " \t") {
			return "white space in a header name"
		}
		switch string(bytes.ToLower(name)) {
		case "content-length":
			cl++
		case "transfer-encoding":
			te++
		}
	}
	switch {
	case cl > 0 && te > 0:
		return "a request with both Transfer-Encoding and Content-Length"
	case cl > 1:
		return "a request with more than one Content-Length"
	case te > 1:
		return "a request with more than one Transfer-Encoding"
	}
	return ""
}

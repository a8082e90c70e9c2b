// Package keepalive is the one HTTP transport set-up h9's clients of
// Slack and of the model endpoint share.
package keepalive

import (
	"net/http"
	"time"
)

// IdleTimeout closes a keep-alive connection unused this long: a
// session's calls keep theirs, while the extra ones a burst opened (two
// goroutines each) close 30 s after it instead of Go's default 90 s
// (BENCHMARKS.md, issue 26).
const IdleTimeout = 30 * time.Second

// Transport is Go's default transport keeping up to idleConns idle
// connections to one host (Go's default of 2 makes every concurrent call
// past the second dial, and TLS-handshake, a new connection).
func Transport(idleConns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idleConns
	t.MaxIdleConnsPerHost = idleConns
	t.IdleConnTimeout = IdleTimeout
	return t
}

// Package netx is the plumbing every network client of h9 shares: the
// keep-alive transport of the Slack and model clients, the one reading of
// a server's Retry-After and rate-limit reset headers, the one backoff
// (exponential, capped, with full jitter) and a sleep that ends with its
// context. Slack, the model, the forges, MCP and the store each decide
// what to retry; how long to wait is decided here, once.
//
// It imports only the standard library, so every layer may use it.
package netx

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// IdleTimeout closes a keep-alive connection unused this long: a
// session's calls keep theirs, while the extra ones a burst opened (two
// goroutines each) close 30 s after it instead of Go's default 90 s
// (BENCHMARKS.md, "Issue 26 — goroutines and capacity").
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

// RetryAfter is how long a server asked its client to wait: OpenAI's
// retry-after-ms, else the standard Retry-After in seconds or as an HTTP
// date (a date in the past is no wait). ok is false when h says nothing.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ResetAt is when a server's rate-limit window reopens, from the reset
// headers forges send (X-RateLimit-Reset, RateLimit-Reset: Unix seconds);
// a small number is read as seconds from now, as the IETF draft has it.
func ResetAt(h http.Header, now time.Time) (time.Time, bool) {
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		v := h.Get(k)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			continue
		}
		if n < 1_000_000_000 { // not a Unix time: a delta in seconds
			return now.Add(time.Duration(n) * time.Second), true
		}
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

// WaitFor is the wait a refused answer asks for: Retry-After, else the
// reset time, each at most limit; ok is false when h asks none.
func WaitFor(h http.Header, now time.Time, limit time.Duration) (time.Duration, bool) {
	if d, ok := RetryAfter(h, now); ok {
		return min(d, limit), true
	}
	if t, ok := ResetAt(h, now); ok {
		return min(max(t.Sub(now), 0), limit), true
	}
	return 0, false
}

// Backoff is an exponential backoff: Base before the first retry, doubled
// each attempt up to Max.
type Backoff struct {
	Base, Max time.Duration
}

// Step is the wait before retry number attempt (1 for the first), without
// jitter: Base·2^(attempt-1), at most Max.
func (b Backoff) Step(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}

// Jitter is Step with full jitter (a uniform wait between 0 and Step), so
// many clients refused at once do not come back at once.
func (b Backoff) Jitter(attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(b.Step(attempt)) + 1))
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Discard is a TCP listener that accepts every connection and closes it at
// once: a port that is surely open (doctor's and the sandbox verifier's
// probes). Close stops it and waits for its goroutine.
type Discard struct {
	net.Listener
	wg sync.WaitGroup
}

// ListenDiscard starts a Discard on addr ("127.0.0.1:0" for any port).
func ListenDiscard(addr string) (*Discard, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d := &Discard{Listener: ln}
	d.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	return d, nil
}

// Close stops accepting and waits for the accepting goroutine.
func (d *Discard) Close() error {
	err := d.Listener.Close()
	d.wg.Wait()
	return err
}

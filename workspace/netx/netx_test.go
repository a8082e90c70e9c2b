package netx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"nil", nil, 0, false},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"milliseconds first", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond, true},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"date past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0, false},
	} {
		got, ok := RetryAfter(c.header, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestResetAtAndWaitFor(t *testing.T) {
	unix := http.Header{"X-Ratelimit-Reset": {"1796644860"}} // 2026-12-07 12:01:00 UTC
	at, ok := ResetAt(unix, now)
	if !ok || !at.Equal(now.Add(time.Minute)) {
		t.Errorf("ResetAt(unix) = %v, %v; want %v", at, ok, now.Add(time.Minute))
	}
	delta := http.Header{"Ratelimit-Reset": {"30"}}
	if at, ok := ResetAt(delta, now); !ok || !at.Equal(now.Add(30*time.Second)) {
		t.Errorf("ResetAt(delta) = %v, %v", at, ok)
	}
	if d, ok := WaitFor(unix, now, 10*time.Second); !ok || d != 10*time.Second {
		t.Errorf("WaitFor capped = %v, %v; want 10s", d, ok)
	}
	both := http.Header{"Retry-After": {"2"}, "X-Ratelimit-Reset": {"1796644860"}}
	if d, ok := WaitFor(both, now, time.Hour); !ok || d != 2*time.Second {
		t.Errorf("WaitFor prefers Retry-After: got %v, %v", d, ok)
	}
	if _, ok := WaitFor(http.Header{}, now, time.Hour); ok {
		t.Error("WaitFor of no header asked for a wait")
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := b.Step(i + 1); got != w*time.Millisecond {
			t.Errorf("Step(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	for range 200 {
		if j := b.Jitter(3); j < 0 || j > 400*time.Millisecond {
			t.Fatalf("Jitter(3) = %v, outside [0, 400ms]", j)
		}
	}
	if got := (Backoff{Base: time.Hour, Max: time.Hour}).Step(1000); got != time.Hour {
		t.Errorf("a large attempt overflowed: %v", got)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context = %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
}

func TestDiscardAcceptsAndCloses(t *testing.T) {
	d, err := ListenDiscard("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", d.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read from a discarded connection = %d, %v; want EOF", n, err)
	}
	c.Close()
	if err := d.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, err := net.DialTimeout("tcp", d.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after Close")
	}
}

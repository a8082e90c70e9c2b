package openai

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// The wait before a retry is the backoff's, or the endpoint's
// Retry-After when that is longer, within maxRetryAfter.
func TestDelayHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	limited := func(h http.Header) error { return &EndpointError{Status: http.StatusTooManyRequests, Header: h} }
	tests := []struct {
		name    string
		backoff time.Duration
		err     error
		want    time.Duration
	}{
		{"no header", time.Second, limited(nil), time.Second},
		{"not an endpoint's answer", time.Second, errors.New("connection refused"), time.Second},
		{"Retry-After longer", time.Second, limited(http.Header{"Retry-After": {"3"}}), 3 * time.Second},
		{"backoff longer", 5 * time.Second, limited(http.Header{"Retry-After": {"3"}}), 5 * time.Second},
		{"retry-after-ms first", 0, limited(http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}}), 250 * time.Millisecond},
		{"bounded", 0, limited(http.Header{"Retry-After": {"86400"}}), maxRetryAfter},
	}
	for _, tt := range tests {
		if got := delay(tt.backoff, tt.err); got != tt.want {
			t.Errorf("%s: delay = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Every failure kind has a name in Failures.
func TestFailureNamesAreClosed(t *testing.T) {
	kinds := Failures()
	for f := failOther; f <= failEmpty+1; f++ { // one past the last: "other"
		if n := f.metricName(); !slices.Contains(kinds, n) {
			t.Errorf("failure %d is named %q, not in %q", f, n, kinds)
		}
	}
	if failEmpty.metricName() == failOther.metricName() {
		t.Error("the last failure kind has no name of its own")
	}
}

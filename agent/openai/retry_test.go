package openai

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestRetryAfterParsing(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"ms wins", http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond, true},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"past date", http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(tt.header)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
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

package slackapi

import (
	"context"
	"net/http"
)

// leaseCheck rides on the context of a session's Slack calls: whether the
// lease they are made under still holds.
type leaseCheck struct{ valid func() bool }

type leaseKey struct{}

// WithLease marks ctx's Slack calls as made under a lease that valid
// reports still held; once it does not, they are refused unsent.
func WithLease(ctx context.Context, valid func() bool) context.Context {
	return context.WithValue(ctx, leaseKey{}, leaseCheck{valid: valid})
}

// leaseGate refuses a Web API request made under a lease this replica no
// longer holds, at the last moment before it leaves the process: a
// replica paused past its lease posts nothing once it resumes, whatever
// its goroutines were about to send.
type leaseGate struct{ next http.RoundTripper }

func (g leaseGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if c, ok := r.Context().Value(leaseKey{}).(leaseCheck); ok && !c.valid() {
		return nil, errLeaseLost
	}
	return g.next.RoundTrip(r)
}

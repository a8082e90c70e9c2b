package fakeslack

import (
	"math"
	"time"
)

// faults are scheduled failures; guarded by Server.mu.
type faults struct {
	rateLimits map[string]*rateLimit
	failNext   map[string][]string
}

type rateLimit struct {
	times      int
	retryAfter int // whole seconds, as Slack's Retry-After header
}

// RateLimit makes the next `times` calls of method answer HTTP 429 with a Retry-After header of
// retryAfter in whole seconds (rounded up, at least 1), as Slack does.
func (s *Server) RateLimit(method string, times int, retryAfter time.Duration) {
	secs := max(1, int(math.Ceil(retryAfter.Seconds())))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.rateLimits == nil {
		s.faults.rateLimits = map[string]*rateLimit{}
	}
	s.faults.rateLimits[method] = &rateLimit{times: times, retryAfter: secs}
}

// FailNext makes the next call of method answer ok:false with slackError. Calls queue up.
func (s *Server) FailNext(method, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.failNext == nil {
		s.faults.failNext = map[string][]string{}
	}
	s.faults.failNext[method] = append(s.faults.failNext[method], slackError)
}

// takeRateLimitLocked reports whether this call is rate limited and for how many seconds.
func (f *faults) takeRateLimitLocked(method string) (int, bool) {
	rl := f.rateLimits[method]
	if rl == nil || rl.times <= 0 {
		return 0, false
	}
	rl.times--
	return rl.retryAfter, true
}

func (f *faults) takeFailureLocked(method string) (string, bool) {
	q := f.failNext[method]
	if len(q) == 0 {
		return "", false
	}
	f.failNext[method] = q[1:]
	return q[0], true
}

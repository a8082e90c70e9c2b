package fakeslack

import (
	"math"
	"slices"
	"strings"
	"time"
)

// faults are scheduled failures; guarded by Server.mu.
type faults struct {
	rateLimits map[string]*rateLimit
	failNext   map[string][]string
	refusals   map[string]string // method → the error every call of it answers (Refuse)
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

// Refuse makes every call of method answer ok:false with slackError from now
// on, as Slack does for an app it will not let use a method: e.g.
// "not_authorized", "missing_scope" (with the needed and provided scopes),
// "unknown_method", "channel_type_not_supported". An empty slackError lifts
// the refusal.
func (s *Server) Refuse(method, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.refusals == nil {
		s.faults.refusals = map[string]string{}
	}
	if slackError == "" {
		delete(s.faults.refusals, method)
		return
	}
	s.faults.refusals[method] = slackError
}

// scopeOf is the bot scope each refusable method needs, for missing_scope's "needed".
var scopeOf = map[string]string{
	"agents.sessions.setStatus": "assistant:write",
	"agents.sessions.rename":    "assistant:write",
}

// grantedScopes is what missing_scope's "provided" lists, less the needed one.
var grantedScopes = []string{"app_mentions:read", "assistant:write", "channels:history", "chat:write", "commands"}

// refusal is Slack's answer refusing method with code; missing_scope names
// the scope needed and the ones the token has, as Slack does.
func refusal(method, code string) reply {
	rep := fail(code)
	if code == "missing_scope" {
		needed := scopeOf[method]
		if needed == "" {
			needed = "chat:write"
		}
		provided := slices.DeleteFunc(slices.Clone(grantedScopes), func(s string) bool { return s == needed })
		rep.body["needed"], rep.body["provided"] = needed, strings.Join(provided, ",")
	}
	return rep
}

// CallCounts returns how many calls of each method the app made (answered
// or not), response_url posts included.
func (s *Server) CallCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, c := range s.calls {
		out[c.Method]++
	}
	return out
}

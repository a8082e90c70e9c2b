package forge

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/h9-app/h9/workspace/netx"
)

// ErrAPI is what every forge error is (errors.Is): the forge refused or
// failed a call.
var ErrAPI = errors.New("forge API error")

// Error is a forge's answer in words: which forge, what h9 was doing, the
// status and the forge's own message, with a hint naming the token's
// variable when the token is the cause. It never holds the token.
type Error struct {
	Kind   Kind
	Doing  string
	Status int // 0: the forge was not reached
	Words  string
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s, %s: %s", e.Kind.Title(), e.Doing, e.Words)
	}
	return fmt.Sprintf("%s, %s: %d %s", e.Kind.Title(), e.Doing, e.Status, e.Words)
}

// Is makes every Error an ErrAPI.
func (e *Error) Is(target error) bool { return target == ErrAPI }

// RateLimited is a forge's 403/429 with a time to come back: callers wait
// until Until before asking that forge again.
type RateLimited struct {
	Kind  Kind
	Until time.Time
}

func (e *RateLimited) Error() string {
	return fmt.Sprintf("%s rate limit: try again after %s", e.Kind.Title(), e.Until.UTC().Format(time.RFC3339))
}

// Is makes a RateLimited an ErrAPI too.
func (e *RateLimited) Is(target error) bool { return target == ErrAPI }

// Title is the forge's name as people write it.
func (k Kind) Title() string {
	switch k {
	case GitHub:
		return "GitHub"
	case GitLab:
		return "GitLab"
	case Gitea:
		return "Gitea"
	}
	return string(k)
}

// RequestWord is what the forge calls a request: pull or merge request.
func (k Kind) RequestWord() string {
	if k == GitLab {
		return "merge request"
	}
	return "pull request"
}

// apiError builds the Error for an HTTP answer: the status's usual cause
// (the token for 401, the project or the token's sight for 404, a right
// for 403) added to the forge's message, the token scrubbed out.
func apiError(p Project, token, doing string, status int, msg string) error {
	msg = strings.Join(strings.Fields(msg), " ")
	switch status {
	case http.StatusUnauthorized:
		msg += fmt.Sprintf(" (the token in %s was refused)", p.TokenEnv)
	case http.StatusNotFound:
		msg += fmt.Sprintf(" (%s does not exist, or the token in %s cannot see it)", p.Path, p.TokenEnv)
	case http.StatusForbidden:
		msg += fmt.Sprintf(" (the token in %s lacks a right on %s)", p.TokenEnv, p.Path)
	}
	return &Error{Kind: p.Kind, Doing: doing, Status: status, Words: scrub(msg, token)}
}

func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[REDACTED]")
}

// retryAfter reads Retry-After (seconds or a date) or a reset time (as
// X-RateLimit-Reset and RateLimit-Reset carry it) from a 403/429 answer,
// through netx; ok is false when the answer is no rate limit.
func retryAfter(h http.Header, status int, now time.Time) (time.Time, bool) {
	if status != http.StatusTooManyRequests && status != http.StatusForbidden {
		return time.Time{}, false
	}
	if d, ok := netx.RetryAfter(h, now); ok {
		return now.Add(d), true
	}
	remaining := h.Get("X-RateLimit-Remaining")
	if remaining == "" {
		remaining = h.Get("RateLimit-Remaining")
	}
	if at, ok := netx.ResetAt(h, now); ok && (remaining == "0" || status == http.StatusTooManyRequests) {
		return at, true
	}
	if status == http.StatusTooManyRequests {
		return now.Add(time.Minute), true // no hint: a minute, as GitHub's docs advise for secondary limits
	}
	return time.Time{}, false
}

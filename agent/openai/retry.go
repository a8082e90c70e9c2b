package openai

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/h9-app/h9/workspace/netx"
)

const (
	DefaultRetryBase = 500 * time.Millisecond
	maxBackoff       = 30 * time.Second
	// maxRetryAfter bounds how long a server may make a run wait per try.
	maxRetryAfter = 2 * time.Minute
	// emptyAnswerTries: an empty answer is asked for again once, then
	// reported; a model that answers nothing twice will not be talked out
	// of it by a third try.
	emptyAnswerTries = 2
)

// retryModel checks every answer (checkAnswer) and retries what is worth
// it — rate limits, server errors, idle timeouts, dropped and refused
// connections, an empty answer once — with exponential backoff and full
// jitter, never sooner than the server's Retry-After. Quota, credentials,
// set-up errors and other refusals are reported at once.
type retryModel struct {
	model   Model
	tries   int
	base    time.Duration
	metrics Metrics // hears every try
}

// WithRetries is m with its answers checked and its failures retried, up
// to tries tries in all, backing off from base; metrics hears every try.
func WithRetries(m Model, tries int, base time.Duration, metrics Metrics) Model {
	return retryModel{model: m, tries: tries, base: base, metrics: metrics}
}

// modelError is the final failure; DescribeError words it.
type modelError struct {
	tries int
	err   error
}

func (e *modelError) Error() string   { return fmt.Sprintf("after %d tries: %v", e.tries, e.err) }
func (e *modelError) Unwrap() []error { return []error{ErrModel, e.err} }

// Whatever it returns, the answer's Discarded holds the usage of the
// answers it refused on the way: they cost tokens all the same. A try that
// gave req.OnText some text and then failed, or was refused, is followed
// by req.OnRetract (see Request).
func (m retryModel) Complete(ctx context.Context, req Request) (Answer, error) {
	empties := 0
	var spent Usage
	backoff := netx.Backoff{Base: m.base, Max: maxBackoff}
	for try := 1; ; try++ {
		ans, err := m.try(ctx, req)
		if err == nil {
			ans.Discarded = spent
			return ans, nil
		}
		spent.add(ans.Usage)
		failed := Answer{Discarded: spent}
		if ctx.Err() != nil {
			return failed, ctx.Err()
		}
		f := classify(err)
		if f == failEmpty {
			empties++
		}
		if !f.retryable() || try >= m.tries || empties >= emptyAnswerTries {
			return failed, &modelError{tries: try, err: err}
		}
		if err := netx.Sleep(ctx, delay(backoff.Jitter(try), err)); err != nil {
			return failed, err
		}
	}
}

// try sends req once and checks the answer; the try is counted. When it
// fails after some of its text reached req.OnText, req.OnRetract says so.
func (m retryModel) try(ctx context.Context, req Request) (Answer, error) {
	heard := false
	if onText := req.OnText; onText != nil {
		req.OnText = func(piece string) {
			heard = true
			onText(piece)
		}
	}
	start := time.Now()
	ans, err := m.model.Complete(ctx, req)
	if err == nil {
		err = checkAnswer(&ans, len(req.Messages))
	}
	m.metrics.ModelRequest(time.Since(start), failureKind(ctx, err))
	if err != nil && heard && req.OnRetract != nil {
		req.OnRetract()
	}
	return ans, err
}

// delay is the wait before the next try: the backoff's, but never sooner
// than the endpoint's Retry-After (bounded by maxRetryAfter).
func delay(backoff time.Duration, err error) time.Duration {
	var ee *EndpointError
	if !errors.As(err, &ee) {
		return backoff
	}
	if ra, ok := netx.RetryAfter(ee.Header, time.Now()); ok {
		return max(backoff, min(ra, maxRetryAfter))
	}
	return backoff
}

// HTTPStatus is the HTTP status of an endpoint's error answer, 0 if err
// is none (a connection failure, an undecodable answer).
func HTTPStatus(err error) int {
	var ee *EndpointError
	if errors.As(err, &ee) {
		return ee.Status
	}
	return 0
}

// Metrics hears every request to the model endpoint.
type Metrics interface {
	// ModelRequest: one try of a model request (retries are tries of
	// their own) ended after d; failure is "" when the answer was usable,
	// else its kind, one of Failures.
	ModelRequest(d time.Duration, failure string)
	// Tokens: what one answer used; estimated when the endpoint reported
	// no usage and h9 estimated it.
	Tokens(prompt, completion int, estimated bool)
}

// Failures lists every failure kind ModelRequest reports.
func Failures() []string {
	out := make([]string, 0, len(failureNames)+1)
	for _, n := range failureNames {
		out = append(out, n)
	}
	return append(out, failureCancelled)
}

// failureCancelled: the request's context ended (the run was stopped).
const failureCancelled = "cancelled"

// failureNames are the failures' names in metrics.
var failureNames = [...]string{
	failOther: "other", failRateLimit: "rate_limit", failQuota: "quota", failAuth: "auth",
	failNotFound: "not_found", failOverflow: "context_overflow", failSetup: "setup",
	failServer: "server", failRejected: "rejected", failIdle: "idle_timeout",
	failDropped: "dropped", failUnreachable: "unreachable", failEmpty: "empty_answer",
}

// failureKind names what went wrong with one try ("" for nothing).
func failureKind(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return failureCancelled
	}
	return classify(err).metricName()
}

// metricName is f's name in metrics; a failure without one is "other".
func (f failure) metricName() string {
	if int(f) < len(failureNames) && failureNames[f] != "" {
		return failureNames[f]
	}
	return failureNames[failOther]
}

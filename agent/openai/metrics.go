package openai

import (
	"context"
	"time"
)

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

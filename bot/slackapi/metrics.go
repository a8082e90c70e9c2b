package slackapi

import "time"

// Metrics hears the Web API calls. Its methods must be cheap, must not
// block and must be safe for concurrent use; method is one of the Web API
// methods named in this package.
type Metrics interface {
	// SlackRequest: one request of a call ("chat.postMessage",
	// "response_url", …) was answered or failed after d; each retry is a
	// request of its own. rateLimited: Slack answered 429.
	SlackRequest(method string, d time.Duration, rateLimited bool)
	// SlackFailed: a call failed for good, after its retries (or was
	// refused before sending, as too large for Slack).
	SlackFailed(method string)
}

// noMetrics counts nothing: New's default.
type noMetrics struct{}

func (noMetrics) SlackRequest(string, time.Duration, bool) {}
func (noMetrics) SlackFailed(string)                       {}

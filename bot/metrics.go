package bot

import (
	"time"

	"github.com/h9-app/h9/bot/slackapi"
)

// Metrics is told what the bot does, to be counted (cmd/h9 counts it with
// Prometheus). Its methods are called on the socket loop, the actors and
// the runs: they must be cheap, must not block and must be safe for
// concurrent use. Every string they get is from a small fixed set (an
// envelope type, a Web API method named in this package), never an id or
// a user. Config.Metrics nil counts nothing.
type Metrics interface {
	EnvelopeMetrics
	SlackMetrics
	SessionMetrics
}

// EnvelopeMetrics hears the Socket Mode envelopes (socket.go).
type EnvelopeMetrics interface {
	// EnvelopeAcked: an envelope of a type ("events_api",
	// "slash_commands", "interactive") was acked, wait after h9 took it
	// from the socket client (its wait for the socket loop included);
	// failed when the ack could not be handed to the connection.
	EnvelopeAcked(kind string, wait time.Duration, failed bool)
	// EnvelopeDuplicate: a redelivered envelope, or an event Slack sent
	// again in a new envelope, was dropped.
	EnvelopeDuplicate(kind string)
}

// SlackMetrics hears the Web API calls (bot/slackapi).
type SlackMetrics = slackapi.Metrics

// SessionMetrics hears the sessions (actor.go).
type SessionMetrics interface {
	// SessionCreated: a thread got a new session.
	SessionCreated()
	// SessionsActive: the number of sessions with a live actor (running,
	// awaiting a click, flushing a checklist edit) changed by delta.
	SessionsActive(delta int)
}

// noMetrics counts nothing: Config.Metrics's default.
type noMetrics struct{}

func (noMetrics) EnvelopeAcked(string, time.Duration, bool) {}
func (noMetrics) EnvelopeDuplicate(string)                  {}
func (noMetrics) SlackRequest(string, time.Duration, bool)  {}
func (noMetrics) SlackFailed(string)                        {}
func (noMetrics) SessionCreated()                           {}
func (noMetrics) SessionsActive(int)                        {}

package main

import (
	"time"

	"github.com/h9-app/h9/agent/store"
)

// The hooks: what the bot (bot.Metrics), the agent (agent.Metrics) and a
// backend with leases report, counted.

func (m *promMetrics) EnvelopeAcked(kind string, wait time.Duration, failed bool) {
	m.envelopes.WithLabelValues(kind).Inc()
	m.ackLatency.Observe(wait.Seconds())
	if failed {
		m.ackErrors.Inc()
	}
}

func (m *promMetrics) EnvelopeDuplicate(kind string) { m.duplicates.WithLabelValues(kind).Inc() }

func (m *promMetrics) SlackRequest(method string, d time.Duration, rateLimited bool) {
	m.slackCalls.WithLabelValues(method).Inc()
	m.slackDuration.WithLabelValues(method).Observe(d.Seconds())
	limited := m.slackLimited.WithLabelValues(method) // both shown at zero once the method is used
	m.slackErrors.WithLabelValues(method)
	if rateLimited {
		limited.Inc()
	}
}

func (m *promMetrics) SlackFailed(method string) { m.slackErrors.WithLabelValues(method).Inc() }

func (m *promMetrics) SlackSurfaceOff(surface, _ string) {
	m.slackSurfacesOff.WithLabelValues(surface).Inc() // the code is in the log line
}

func (m *promMetrics) SessionCreated() { m.sessionsCreated.Inc() }

func (m *promMetrics) SessionsActive(delta int) { m.sessionsActive.Add(float64(delta)) }

func (m *promMetrics) RunStarted(intent string) {
	m.runsStarted.WithLabelValues(intent).Inc()
	m.runsInFlight.Inc()
}

func (m *promMetrics) RunEnded(_, outcome string, d time.Duration) {
	m.runsEnded.WithLabelValues(outcome).Inc()
	m.runsInFlight.Dec()
	m.runDuration.Observe(d.Seconds())
}

func (m *promMetrics) ModelRequest(d time.Duration, failure string) {
	m.modelRequests.Inc()
	m.modelDuration.Observe(d.Seconds())
	if failure != "" {
		m.modelErrors.WithLabelValues(failure).Inc()
	}
}

func (m *promMetrics) Tokens(prompt, completion int, estimated bool) {
	m.promptTokens.Add(float64(prompt))
	m.completionTokens.Add(float64(completion))
	if estimated {
		m.promptEstimate.Add(float64(prompt))
		m.completionEstimate.Add(float64(completion))
	}
}

// LeaseChanged counts n changes of this replica's leases (a renewal
// statement may extend many). A backend with leases reports them;
// bbolt has none.
func (m *promMetrics) LeaseChanged(c store.LeaseChange, n int) {
	switch c {
	case store.LeaseAcquired, store.LeaseTakenOver, store.LeaseRenewed, store.LeaseReleased, store.LeaseLost:
	default:
		c = "other" // the label set stays closed whatever a backend passes
	}
	if n > 0 {
		m.leaseChanges.WithLabelValues(string(c)).Add(float64(n))
	}
}

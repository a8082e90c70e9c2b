package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot"
)

// metricsPrefix starts every metric h9 exposes, the Go runtime's included.
const metricsPrefix = "h9_"

// Histogram buckets, in seconds. Slack wants an ack within 3 s; h9's are
// well under a millisecond unless it is overloaded.
var (
	ackBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 3}
	slackBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	modelBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120}
	runBuckets   = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}
)

// promMetrics counts what the bot (bot.Metrics), the agent (agent.Metrics)
// and a backend with leases (LeaseChanged) report, in a registry of its
// own, served at /metrics.
type promMetrics struct {
	reg *prometheus.Registry

	envelopes, duplicates *prometheus.CounterVec // by envelope type
	ackLatency            prometheus.Histogram
	ackErrors             prometheus.Counter

	slackCalls, slackLimited, slackErrors *prometheus.CounterVec // by method
	slackDuration                         *prometheus.HistogramVec

	sessionsCreated prometheus.Counter
	sessionsActive  prometheus.Gauge

	runsStarted  *prometheus.CounterVec // by intent
	runsEnded    *prometheus.CounterVec // by outcome
	runsInFlight prometheus.Gauge
	runDuration  prometheus.Histogram

	modelRequests          prometheus.Counter
	modelDuration          prometheus.Histogram
	modelErrors            *prometheus.CounterVec // by failure kind
	tokens, tokensEstimate *prometheus.CounterVec // by type: prompt, completion
	// The four children of tokens and tokensEstimate, resolved once.
	promptTokens, completionTokens, promptEstimate, completionEstimate prometheus.Counter

	leaseChanges *prometheus.CounterVec // by change

	mcpCalls *prometheus.CounterVec // by server_kind, outcome (metrics_mcp.go)
	// automationFires: by automation, trigger, outcome (metrics_automations.go)
	automationFires *prometheus.CounterVec
}

var (
	_ bot.Metrics   = (*promMetrics)(nil)
	_ agent.Metrics = (*promMetrics)(nil)
)

// newPromMetrics registers every metric, with each label value known in
// advance shown at zero, and the Go runtime's and the process's metrics.
func newPromMetrics() *promMetrics {
	m := &promMetrics{reg: prometheus.NewRegistry()}
	f := factory{prometheus.WrapRegistererWithPrefix(metricsPrefix, m.reg)}
	f.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.envelopes = f.counters("envelopes_total", "Socket Mode envelopes acked, by envelope type.", "type")
	m.duplicates = f.counters("envelopes_duplicate_total", "Envelopes and events Slack delivered again, dropped, by envelope type.", "type")
	m.ackLatency = f.histogram("ack_latency_seconds", "Time from h9's receipt of an envelope from the Socket Mode client to its ack handed to the connection.", ackBuckets)
	m.ackErrors = f.counter("ack_errors_total", "Acks that could not be handed to the connection.")

	m.slackCalls = f.counters("slack_calls_total", "Web API requests sent, each retry included, by method.", "method")
	m.slackDuration = f.histograms("slack_call_duration_seconds", "Web API request latency, by method.", slackBuckets, "method")
	m.slackLimited = f.counters("slack_rate_limited_total", "Web API requests Slack answered 429, by method.", "method")
	m.slackErrors = f.counters("slack_errors_total", "Web API calls that failed after their retries, by method.", "method")

	m.sessionsCreated = f.counter("sessions_created_total", "Sessions started in a new thread.")
	m.sessionsActive = f.gauge("sessions_active", "Sessions in memory now: running, awaiting a click or finishing a checklist edit.")

	m.runsStarted = f.counters("runs_started_total", "Agent runs started, by intent.", "intent")
	m.runsEnded = f.counters("runs_total", "Agent runs ended, by outcome.", "outcome")
	m.runsInFlight = f.gauge("runs_in_flight", "Agent runs in progress now.")
	m.runDuration = f.histogram("run_duration_seconds", "Agent run duration.", runBuckets)

	m.modelRequests = f.counter("model_requests_total", "Requests to the model endpoint, each retry included.")
	m.modelDuration = f.histogram("model_request_duration_seconds", "Model request latency, to the end of the answer.", modelBuckets)
	m.modelErrors = f.counters("model_errors_total", "Model requests that failed, by kind.", "kind")
	m.tokens = f.counters("model_tokens_total", "Tokens used, by type (prompt, completion); estimated ones included.", "type")
	m.tokensEstimate = f.counters("model_tokens_estimated_total", "Tokens h9 estimated because the endpoint reported no usage, by type.", "type")

	m.leaseChanges = f.counters("lease_changes_total", "Changes of this replica's session leases, by change.", "change")
	m.registerMCP(f)
	m.registerAutomations(f)
	m.showAtZero()
	return m
}

// showAtZero makes every label value known in advance visible before it
// first counts, so a rate over it starts from zero.
func (m *promMetrics) showAtZero() {
	for _, t := range []string{"events_api", "slash_commands", "interactive"} {
		m.envelopes.WithLabelValues(t)
		m.duplicates.WithLabelValues(t)
	}
	for _, intent := range []string{"task", "reply", "execute", "continue", "proceed"} {
		m.runsStarted.WithLabelValues(intent)
	}
	for _, o := range agent.RunOutcomes() {
		m.runsEnded.WithLabelValues(o)
	}
	for _, k := range openai.Failures() {
		m.modelErrors.WithLabelValues(k)
	}
	m.promptTokens, m.completionTokens = m.tokens.WithLabelValues("prompt"), m.tokens.WithLabelValues("completion")
	m.promptEstimate, m.completionEstimate = m.tokensEstimate.WithLabelValues("prompt"), m.tokensEstimate.WithLabelValues("completion")
	for _, c := range store.LeaseChanges() {
		m.leaseChanges.WithLabelValues(string(c))
	}
}

// watchSocket exposes whether Socket Mode is connected, read at each scrape.
func (m *promMetrics) watchSocket(connected func() bool) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: metricsPrefix + "socket_connected", Help: "1 while Socket Mode is connected, else 0.",
	}, func() float64 {
		if connected() {
			return 1
		}
		return 0
	}))
}

// forBot and forAgent are m as the hooks' interfaces: nil (counting
// nothing) when metrics are off, never an interface holding a nil pointer.
func (m *promMetrics) forBot() bot.Metrics {
	if m == nil {
		return nil
	}
	return m
}

func (m *promMetrics) forAgent() agent.Metrics {
	if m == nil {
		return nil
	}
	return m
}

// forStore is m's LeaseChanged for a backend with leases; nil when
// metrics are off.
func (m *promMetrics) forStore() func(store.LeaseChange, int) {
	if m == nil {
		return nil
	}
	return m.LeaseChanged
}

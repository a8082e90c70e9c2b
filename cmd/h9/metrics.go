package main

import (
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace/egress"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
	slackSurfacesOff                      *prometheus.CounterVec // by surface

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

	mcpCalls        *prometheus.CounterVec // by server_kind, outcome
	automationFires *prometheus.CounterVec // by automation, trigger, outcome (config_automations.go)
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
	m.slackSurfacesOff = f.counters("slack_surfaces_off_total", "Agent surfaces Slack refused, off until h9 restarts, by surface (the error is logged).", "surface")

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

// factory makes and registers metrics; names get the registerer's prefix.
type factory struct{ reg prometheus.Registerer }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) counters(name, help, label string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) histograms(name, help string, buckets []float64, label string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{label})
	f.reg.MustRegister(h)
	return h
}

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

// egressMetrics counts the egress proxy's requests by decision
// (h9_egress_requests_total), every decision present from the start.
type egressMetrics struct{ requests *prometheus.CounterVec }

func (e egressMetrics) EgressRequest(decision string) { e.requests.WithLabelValues(decision).Inc() }

// forEgress registers the counter in m's registry; nil without metrics.
func (m *promMetrics) forEgress() egress.Metrics {
	if m == nil {
		return nil
	}
	f := factory{prometheus.WrapRegistererWithPrefix(metricsPrefix, m.reg)}
	e := egressMetrics{requests: f.counters("egress_requests_total", "Requests of sandboxed commands through h9's egress proxy, by decision: allowed, refused or error.", "decision")}
	for _, d := range []string{egress.DecisionAllowed, egress.DecisionRefused, egress.DecisionError} {
		e.requests.WithLabelValues(d)
	}
	return e
}

// registerMCP adds h9_mcp_calls_total, every label pair shown at zero.
// Server names are never labels: a file's names would be unbounded.
func (m *promMetrics) registerMCP(f factory) {
	m.mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcp_calls_total", Help: "MCP tool calls, by server kind (remote, stdio) and outcome (ok, tool_error, failed, timeout).",
	}, []string{"server_kind", "outcome"})
	f.reg.MustRegister(m.mcpCalls)
	for _, k := range []string{"remote", "stdio"} {
		for _, o := range []string{"ok", "tool_error", "failed", "timeout"} {
			m.mcpCalls.WithLabelValues(k, o)
		}
	}
}

// MCPCall counts one call (mcp.Metrics).
func (m *promMetrics) MCPCall(kind, outcome string) { m.mcpCalls.WithLabelValues(kind, outcome).Inc() }

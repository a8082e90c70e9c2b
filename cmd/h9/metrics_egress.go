package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/h9-app/h9/workspace/egress"
)

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

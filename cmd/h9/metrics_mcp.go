package main

import "github.com/prometheus/client_golang/prometheus"

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

package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// registerAutomations adds h9_automation_fires_total{automation,trigger,
// outcome} (ARCHITECTURE.md, "Automations"). Automation names come from
// the operator's and the repositories' files: bounded by what is defined.
func (m *promMetrics) registerAutomations(f factory) {
	m.automationFires = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "automation_fires_total", Help: "Automation occurrences, by automation, trigger and outcome (started, deduplicated, skipped, failed).",
	}, []string{"automation", "trigger", "outcome"})
	f.reg.MustRegister(m.automationFires)
}

// AutomationFired counts one occurrence (bot.AutomationMetrics).
func (m *promMetrics) AutomationFired(name, trigger, outcome string) {
	m.automationFires.WithLabelValues(name, trigger, outcome).Inc()
}

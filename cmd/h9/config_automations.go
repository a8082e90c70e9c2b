package main

import (
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/bot/automation"
)

// AutomationConfig is the settings of automations (ARCHITECTURE.md,
// "Automations").
type AutomationConfig struct {
	AutomationsFile       string        `split_words:"true" desc:"YAML file of automations: automations: [{name, channel, owner, repo, task, mode, on, timezone, dedupe, budget, daily_budget, overlap}] (docs/automations.md); empty = none"`
	AutomationMinInterval time.Duration `split_words:"true" default:"1h" desc:"a schedule whose occurrences come closer than this is refused at start (at least 1m)"`
	AutomationRefresh     time.Duration `split_words:"true" default:"10m" desc:"how often a repository's .h9/automations.yaml is read again at the least (at least 10s)"`
}

// checkAutomations checks the settings and H9_AUTOMATIONS_FILE, one line
// naming the file, the line and what is wrong.
func (c *Config) checkAutomations() error {
	if err := atLeast("H9_AUTOMATION_MIN_INTERVAL", c.AutomationMinInterval, automation.FloorMinInterval); err != nil {
		return err
	}
	if err := atLeast("H9_AUTOMATION_REFRESH", c.AutomationRefresh, automation.FloorRefresh); err != nil {
		return err
	}
	if c.AutomationsFile == "" {
		return nil
	}
	if _, err := automation.LoadFile(c.AutomationsFile, c.automationEnv()); err != nil {
		return invalid("%s", unwrapAutomation(err))
	}
	return nil
}

// automationEnv is what checking an automations file needs of the
// configuration.
func (c *Config) automationEnv() automation.Env {
	env := automation.Env{Getenv: os.LookupEnv, Admins: len(cleanList(c.Admins)) > 0, MinInterval: c.AutomationMinInterval, Repos: []string{}}
	for _, r := range c.repos {
		env.Repos = append(env.Repos, r.Name)
	}
	return env
}

// unwrapAutomation drops the "invalid automation: " prefix: the line
// names the file already.
func unwrapAutomation(err error) string {
	const p = "invalid automation: "
	s := err.Error()
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

// automate fills the bot's automation settings.
func (c AutomationConfig) automate(bc *bot.Config) {
	bc.AutomationsFile, bc.AutomationMinInterval, bc.AutomationRefresh = c.AutomationsFile, c.AutomationMinInterval, c.AutomationRefresh
}

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

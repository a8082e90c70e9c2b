package main

import (
	"log/slog"

	"github.com/h9-app/h9/bot"
)

// newMetrics is what the bot and the agent count into when H9_HTTP_ADDR
// serves it; nil (counting nothing) when it is off.
func newMetrics(cfg Config) *promMetrics {
	if cfg.HTTPAddr == "" {
		return nil
	}
	return newPromMetrics()
}

// serveHTTP starts the H9_HTTP_ADDR server for b and its store; nil when
// metrics are off.
func serveHTTP(cfg Config, m *promMetrics, b *bot.Bot, st pinger, log *slog.Logger) (*httpServer, error) {
	if m == nil {
		return nil, nil
	}
	m.watchSocket(b.Connected)
	ready := &readiness{socketConnected: b.Connected, store: st, log: log}
	return listenHTTP(cfg.HTTPAddr, newHTTPHandler(m, ready, b.HookHandler()), log)
}

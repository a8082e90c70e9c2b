package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/bot"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	// readyTimeout bounds the store's answer to one /readyz.
	readyTimeout = 2 * time.Second
	// httpShutdownGrace bounds the wait for requests in flight at shutdown.
	httpShutdownGrace = 5 * time.Second
)

// pinger is a store that can say whether it answers (boltstore, pgstore).
type pinger interface {
	Ping(ctx context.Context) error
}

// readiness is what /readyz asks: whether Slack can deliver to this
// process and the store answers.
type readiness struct {
	socketConnected func() bool
	store           pinger
	log             *slog.Logger
	last            atomic.Value // the last answer's reason ("" = ready), to log changes only
}

// check returns "" when ready, else why not; err is the store's failure.
func (r *readiness) check(ctx context.Context) (why string, err error) {
	if !r.socketConnected() {
		return "socket mode is not connected", nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := r.store.Ping(ctx); err != nil {
		return "store does not answer", err
	}
	return "", nil
}

func (r *readiness) serveHTTP(w http.ResponseWriter, req *http.Request) {
	why, err := r.check(req.Context())
	r.logChange(why, err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if why != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + why + "\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// logChange logs when readiness flips, not at every probe.
func (r *readiness) logChange(why string, err error) {
	if prev, _ := r.last.Swap(why).(string); prev == why {
		return
	}
	if why == "" {
		r.log.Info("ready")
		return
	}
	r.log.Warn("not ready", "why", why, "err", err)
}

// newHTTPHandler serves /healthz (the process runs), /readyz and /metrics.
// hooks, when set, serves the automations' webhooks at /hooks/.
func newHTTPHandler(m *promMetrics, ready *readiness, hooks http.Handler) http.Handler {
	mux := http.NewServeMux()
	if hooks != nil {
		mux.Handle("/hooks/", hooks) // every method: the handler answers 405 itself
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", ready.serveHTTP)
	// The handler counts its own failures, prefixed like the rest.
	errorsTo := prometheus.WrapRegistererWithPrefix(metricsPrefix, m.reg)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: errorsTo}))
	return mux
}

// httpServer is the server on H9_HTTP_ADDR.
type httpServer struct {
	srv  *http.Server
	addr string // where it listens (the port chosen, for :0)
	done chan struct{}
	log  *slog.Logger
}

// listenHTTP binds H9_HTTP_ADDR and serves h on it. A failure to bind is
// a setting to fix: its error names the variable.
func listenHTTP(addr string, h http.Handler, log *slog.Logger) (*httpServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, invalid("H9_HTTP_ADDR=%q: %v", addr, err)
	}
	s := &httpServer{
		srv: &http.Server{
			Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
		log:  log,
	}
	log.Info("serving health checks and metrics", "addr", s.addr)
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("health and metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

// stop lets requests in flight finish (for a while), then closes; a nil
// server (metrics off) has nothing to stop.
func (s *httpServer) stop() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.log.Warn("health and metrics server: closing with requests in flight", "err", err)
		_ = s.srv.Close()
	}
	<-s.done
}

// checkHTTPAddr accepts an empty H9_HTTP_ADDR (off) or host:port with a
// numeric port, as net.Listen takes it (":9090", "127.0.0.1:9090",
// "[::1]:9090"; port 0 picks a free one). Whether the address can be
// bound is known only when h9 listens, at start.
func checkHTTPAddr(v string) error {
	if v == "" {
		return nil
	}
	const form = "H9_HTTP_ADDR must be host:port or :port, e.g. :9090 (got %q)"
	host, port, err := net.SplitHostPort(v)
	if err != nil || strings.ContainsAny(host, "/ ") {
		return invalid(form, v)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return invalid("H9_HTTP_ADDR's port must be a number from 0 to 65535 (got %q)", v)
	}
	return nil
}

// checkHTTP proves H9_HTTP_ADDR can be listened on (nothing else holds
// it), so h9 will not stop at start over it.
func checkHTTP(_ context.Context, cfg Config) finding {
	if cfg.HTTPAddr == "" {
		return ok("off (set H9_HTTP_ADDR to serve /healthz, /readyz and /metrics)")
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return failed("choose a free address for H9_HTTP_ADDR, or stop what listens there (a running h9?)",
			"cannot listen on %s: %v", cfg.HTTPAddr, err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return failed("check the network set-up", "closing %s: %v", addr, err)
	}
	return ok("%s is free: /healthz, /readyz and /metrics will be served there", cfg.HTTPAddr)
}

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

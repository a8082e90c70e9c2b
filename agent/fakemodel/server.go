// Package fakemodel is a scripted OpenAI-compatible chat-completions server
// for tests and benchmarks. It is a real HTTP server (httptest), so clients
// such as go-openai are exercised end to end: encoding, status codes,
// headers, retries.
//
//	srv := fakemodel.New()
//	defer srv.Close()
//	srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"ls"}`), fakemodel.Text("done"))
//	client := srv.Client() // or openai.DefaultConfig with BaseURL = srv.URL()
//
// Replies come from the queue first, then from Handler; with neither, the
// server answers 400 "fakemodel: no scripted reply left", which a client
// does not retry, so an under-scripted test fails loudly.
package fakemodel

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Handler computes a reply from the request, for stateful scripts (e.g. one
// script per session, keyed by req.User, which the agent sets to the session id).
type Handler func(req openai.ChatCompletionRequest) Reply

// Server is the fake endpoint. All methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu         sync.Mutex
	queue      []Reply
	handler    Handler
	latency    time.Duration
	record     bool
	requests   []openai.ChatCompletionRequest
	calls      int
	seq        int
	models     []string
	unscripted int
}

// Option configures a Server.
type Option func(*Server)

// WithHandler sets the fallback Handler used when the queue is empty.
func WithHandler(h Handler) Option { return func(s *Server) { s.handler = h } }

// WithLatency delays every reply by d (added to a reply's own Latency).
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithoutRecording stops the server from keeping requests (benchmarks).
func WithoutRecording() Option { return func(s *Server) { s.record = false } }

// WithModels sets the ids /v1/models lists (default "fake-model").
func WithModels(ids ...string) Option { return func(s *Server) { s.models = ids } }

// New starts a server.
func New(opts ...Option) *Server {
	s := &Server{record: true, models: []string{"fake-model"}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close shuts the server down; in-flight latencies are cut short.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns a go-openai client pointed at the server.
func (s *Server) Client() *openai.Client {
	cfg := openai.DefaultConfig("fake-key")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = s.srv.Client()
	return openai.NewClientWithConfig(cfg)
}

// Enqueue appends scripted replies; they are served in order.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetHandler replaces the fallback Handler (nil removes it).
func (s *Server) SetHandler(h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// SetLatency changes the latency added to every reply.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Requests returns a copy of every decoded chat request received so far.
func (s *Server) Requests() []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), s.requests...)
}

// Calls is the number of chat requests received (recorded or not).
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Pending is the number of queued replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Unscripted counts requests that found neither a queued reply nor a Handler.
func (s *Server) Unscripted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unscripted
}

// next records req and picks its reply; ok is false when nothing is scripted.
func (s *Server) next(req openai.ChatCompletionRequest) (r Reply, latency time.Duration, ok bool) {
	s.mu.Lock()
	s.calls++
	if s.record {
		s.requests = append(s.requests, req)
	}
	latency = s.latency
	if len(s.queue) > 0 {
		r, s.queue = s.queue[0], s.queue[1:]
		s.mu.Unlock()
		return r, latency, true
	}
	h := s.handler
	if h == nil {
		s.unscripted++
	}
	s.mu.Unlock()
	if h == nil {
		return Reply{}, latency, false
	}
	return h(req), latency, true
}

// nextID numbers generated tool-call ids across the server's life.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

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
//
// It behaves as the endpoints h9 meets do: it streams when asked
// (server-sent events, tool calls in pieces by index, the usage chunk
// only with stream_options.include_usage), refuses the histories OpenAI
// refuses (null content, unanswered or stray tool calls, repeated ids),
// Gemini's calls without their thought signature and DeepSeek's without
// their reasoning; options add a context window (WithContextLimit),
// credentials (WithAPIKey, also on Azure's deployment and /openai/v1
// routes), Mistral's strict fields (WithStrictFields) and a server without
// a tool-call parser (WithoutToolParser); replies script the rest (see
// Reply and the constructors in faults.go).
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

	mu       sync.Mutex
	queue    []Reply
	handler  Handler
	latency  time.Duration
	record   bool
	requests []openai.ChatCompletionRequest
	bodies   [][]byte
	headers  []http.Header
	calls    int
	seq      int
	// reportedPrompt and reportedCompletion add up the usage sent.
	reportedPrompt, reportedCompletion int
	models                             []string
	unscripted                         int
	issued                             map[string]issuedCall // call id → what must come back with it

	apiKey       string
	buffered     bool
	strict       bool
	parser       ToolParser
	contextLimit int
	textOnly     TextOnly
}

// issuedCall is what the server expects back with a call it made.
type issuedCall struct{ signature, reasoning string }

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

// WithoutModelsList makes /v1/models answer 404, as some local servers do.
func WithoutModelsList() Option { return func(s *Server) { s.models = nil } }

// WithBufferedStreams sends a stream's events in one write instead of one
// flush each (unless a reply has a ChunkGap), as a proxy that buffers
// does: benchmarks then measure h9's reading of a stream, not one wake-up
// per event on both sides of the loopback.
func WithBufferedStreams() Option { return func(s *Server) { s.buffered = true } }

// WithAPIKey makes the server require key: as a bearer token on /v1, as
// the api-key header on Azure's deployment routes, either on /openai/v1.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithStrictFields makes the server refuse, as Mistral does (422
// extra_forbidden), any request field it does not know (stream_options,
// user) and reasoning_content on messages.
func WithStrictFields() Option { return func(s *Server) { s.strict = true } }

// WithoutToolParser makes every request with tools fail as that server
// does when started without its tool-call parser.
func WithoutToolParser(p ToolParser) Option { return func(s *Server) { s.parser = p } }

// WithContextLimit refuses (400 context_length_exceeded) any prompt over
// tokens, estimated as characters / 4.
func WithContextLimit(tokens int) Option { return func(s *Server) { s.contextLimit = tokens } }

// New starts a server.
func New(opts ...Option) *Server {
	s := &Server{record: true, models: []string{"fake-model"}, issued: map[string]issuedCall{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /openai/v1/chat/completions", s.chat)
	mux.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /openai/v1/models", s.listModels)
	mux.HandleFunc("GET /openai/models", s.listModels) // Azure, beside its deployments
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL to configure a client with; it ends in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// AzureDeploymentURL is an Azure OpenAI deployment URL on this server.
func (s *Server) AzureDeploymentURL(deployment, apiVersion string) string {
	return s.srv.URL + "/openai/deployments/" + deployment + "?api-version=" + apiVersion
}

// AzureV1URL is Azure OpenAI's /openai/v1 base URL on this server.
func (s *Server) AzureV1URL() string { return s.srv.URL + "/openai/v1" }

// Addr is the server's host:port, for a client that dials it under
// another name (an Azure host name, say).
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

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

// Bodies returns a copy of every chat request body as it arrived.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Headers returns the headers of every chat request received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Calls is the number of chat requests received (recorded or not).
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Reported is the sum of the token usage the server has sent (a stream
// sends it only when asked with stream_options.include_usage).
func (s *Server) Reported() (prompt, completion int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reportedPrompt, s.reportedCompletion
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

// received counts and records a request.
func (s *Server) received(req request, body []byte, h http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.record {
		s.requests = append(s.requests, req.ChatCompletionRequest)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, h.Clone())
	}
}

// next picks the reply to req; ok is false when nothing is scripted.
func (s *Server) next(req openai.ChatCompletionRequest) (r Reply, latency time.Duration, ok bool) {
	s.mu.Lock()
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

// remember notes what a call must carry when it comes back.
func (s *Server) remember(id, signature, reasoning string) {
	if signature == "" && reasoning == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issued[id] = issuedCall{signature: signature, reasoning: reasoning}
}

// nextID numbers generated tool-call ids across the server's life.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

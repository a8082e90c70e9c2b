// Package fakeslack is an in-process fake of Slack for end-to-end tests: the Web API under /api/,
// Socket Mode over a real websocket under /ws, and response_url endpoints under /response/.
// It checks every message the app sends against Slack's limits and records what it saw.
package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Options configures a Server. Zero values get the defaults named on each field.
type Options struct {
	BotToken  string // "xoxb-test"
	AppToken  string // "xapp-test"
	BotUserID string // "UBOT"
	BotID     string // "BBOT"
	TeamID    string // "T1"
	AppID     string // "A1"
	// PingInterval between WebSocket PINGs (default 2s). slack-go reconnects after 30s without one.
	PingInterval time.Duration
	// EchoBotMessages delivers the bot's own chat.postMessage posts back as message events with
	// bot_id set, as Slack does; the app is expected to ignore them.
	EchoBotMessages bool
	// EchoEdits also delivers a message_changed event (subtype, no top-level user or bot_id, the new
	// message under "message") for every chat.update, as Slack does for channel history subscribers.
	EchoEdits bool
	// Logf, when set, receives a line per socket frame and API call (e.g. t.Logf).
	Logf func(format string, args ...any)
	// AckTimeout, when set, is how long an envelope waits for its ack before Slack sends it again
	// (retry_attempt+1), to another open connection when there is one; 0 waits as long as the
	// connection lives.
	AckTimeout time.Duration
}

func (o *Options) defaults() {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&o.BotToken, "xoxb-test")
	def(&o.AppToken, "xapp-test")
	def(&o.BotUserID, "UBOT")
	def(&o.BotID, "BBOT")
	def(&o.TeamID, "T1")
	def(&o.AppID, "A1")
	if o.PingInterval <= 0 {
		o.PingInterval = 2 * time.Second
	}
}

// Server is a running fake Slack. All methods are safe for concurrent use.
type Server struct {
	opts Options
	srv  *httptest.Server

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // websocket handlers and background deliveries
	once   sync.Once
	hangs  hangs // Web API calls held without an answer (Hang)
	// hangsAfter: calls done, then held without their answer (HangAfter).
	hangsAfter hangs

	mu         sync.Mutex
	seq        int64 // ids and timestamps
	calls      []Call
	violations []string
	received   []string // what the app sent, credentials removed (see Received)
	faults     faults
	store      store
	users      map[string]string // id → name
	channels   map[string]string // id → name
	sock       sockets
	envelopes  map[string]*envelope
	responses  map[string]*responseURL
	homeViews  map[string]json.RawMessage // user id → the view last published (views.publish)
	files      files
	shared     sharedFiles       // files users shared (shared.go)
	emails     map[string]string // user id → email (users.info profile)
	agents     agentSessions     // agent sessions by channel/root ts (agents.go)
	// noStreaming: channels of a type Slack will not stream in (CannotStream).
	noStreaming map[string]bool
}

// New starts a fake Slack on a loopback port.
func New(opts Options) *Server {
	opts.defaults()
	s := &Server{
		opts:      opts,
		users:     map[string]string{opts.BotUserID: "h9"},
		channels:  map[string]string{},
		envelopes: map[string]*envelope{},
		responses: map[string]*responseURL{},
		agents:    agentSessions{},

		noStreaming: map[string]bool{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.store.init()
	s.sock.init()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/ws", s.serveSocket)
	mux.HandleFunc("/r/{replica}/api/", s.serveAPI)
	mux.HandleFunc("/r/{replica}/ws", s.serveSocket)
	mux.HandleFunc("/response/", s.serveResponseURL)
	mux.HandleFunc("/upload/", s.serveUpload)
	mux.HandleFunc("/files-pri/", s.serveSharedFile)
	s.srv = httptest.NewServer(mux)
	return s
}

// APIURL is the Web API base for slack.OptionAPIURL; it ends in "/".
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// Options returns the effective options (defaults filled in).
func (s *Server) Options() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

// Close drops every socket, stops background deliveries and shuts the HTTP server down.
func (s *Server) Close() {
	s.once.Do(func() {
		s.cancel()
		s.closeSockets()
		s.wg.Wait()
		s.srv.Close()
	})
}

// AddUser names a user for users.info and slash-command payloads.
func (s *Server) AddUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// SetEmail gives a user an email address for users.info's profile.
func (s *Server) SetEmail(id, email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.emails == nil {
		s.emails = map[string]string{}
	}
	s.emails[id] = email
}

// AddChannel names a channel for conversations.info and payloads.
func (s *Server) AddChannel(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = name
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf("fakeslack: "+format, args...)
	}
}

// nextSeqLocked returns a fresh positive number; s.mu must be held.
func (s *Server) nextSeqLocked() int64 {
	s.seq++
	return s.seq
}

// newTSLocked returns a message timestamp strictly greater than every earlier one.
func (s *Server) newTSLocked() string {
	micros := int64(1_700_000_000_000_000) + s.nextSeqLocked()*100
	return fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
}

func (s *Server) userNameLocked(id string) string {
	if n, ok := s.users[id]; ok {
		return n
	}
	return "user-" + strings.ToLower(id)
}

func (s *Server) channelNameLocked(id string) string {
	if n, ok := s.channels[id]; ok {
		return n
	}
	return "chan-" + strings.ToLower(id)
}

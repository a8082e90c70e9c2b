package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// sockets is the Socket Mode side of the server; guarded by Server.mu.
type sockets struct {
	closed  bool
	live    []*wsConn
	changed chan struct{} // closed and replaced whenever live changes
	tickets map[string]bool
	waiters map[string][]chan ackMsg // envelope_id → deliveries waiting for its ack
	total   int                      // connections ever greeted
	next    int                      // round-robin position among live connections
	fanout  int                      // connections each envelope is written to (Fanout); 0 = 1
	prefer  string                   // the replica whose connections get every envelope (Prefer)
}

func (ss *sockets) init() {
	ss.changed = make(chan struct{})
	ss.tickets = map[string]bool{}
	ss.waiters = map[string][]chan ackMsg{}
}

func (ss *sockets) notifyLocked() {
	close(ss.changed)
	ss.changed = make(chan struct{})
}

// currentLocked is the connection new envelopes go to: the newest one not told to go away.
func (ss *sockets) currentLocked() *wsConn {
	for i := len(ss.live) - 1; i >= 0; i-- {
		if !ss.live[i].draining {
			return ss.live[i]
		}
	}
	return nil
}

type wsConn struct {
	id       int
	replica  string // the tag of the URL it connected through ("" for /ws)
	c        *websocket.Conn
	wmu      sync.Mutex // gorilla allows one concurrent writer
	done     chan struct{}
	draining bool // guarded by Server.mu
}

func (wc *wsConn) write(data []byte) error {
	wc.wmu.Lock()
	defer wc.wmu.Unlock()
	_ = wc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return wc.c.WriteMessage(websocket.TextMessage, data)
}

type ackMsg struct {
	payload json.RawMessage
	at      time.Time
}

// The client sends Origin https://api.slack.com; Slack does not care, neither do we.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ticket := r.URL.Query().Get("ticket")
	valid := s.sock.tickets[ticket] && !s.sock.closed
	delete(s.sock.tickets, ticket)
	if valid {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	defer s.wg.Done()
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	wc := &wsConn{c: c, done: make(chan struct{}), replica: r.PathValue("replica")}
	if !s.greet(wc) {
		c.Close()
		return
	}
	var pinger sync.WaitGroup
	pinger.Go(func() { s.ping(wc) })
	s.readAcks(wc)
	close(wc.done)
	c.Close()
	pinger.Wait()
	s.mu.Lock()
	s.sock.live = slices.DeleteFunc(s.sock.live, func(x *wsConn) bool { return x == wc })
	s.sock.notifyLocked()
	s.mu.Unlock()
	s.logf("socket %d closed", wc.id)
}

// greet sends hello and makes wc the current connection.
func (s *Server) greet(wc *wsConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sock.closed {
		return false
	}
	s.sock.total++
	wc.id = s.sock.total
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.sock.live) + 1,
		"debug_info": map[string]any{"host": fmt.Sprintf("fakeslack-%d", wc.id), "build_number": 1,
			"approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	// Writing under s.mu keeps hello first on the wire; the connection is new, nothing else writes.
	if err := wc.write(hello); err != nil {
		return false
	}
	s.sock.live = append(s.sock.live, wc)
	s.sock.notifyLocked()
	s.logf("socket %d connected (replica %q)", wc.id, wc.replica)
	return true
}

// ping sends WebSocket PINGs; slack-go reconnects when they stop for 30s.
func (s *Server) ping(wc *wsConn) {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-wc.done:
			return
		case <-t.C:
			if err := wc.c.WriteControl(websocket.PingMessage, fmt.Appendf(nil, "%d", n), time.Now().Add(5*time.Second)); err != nil {
				return
			}
		}
	}
}

// readAcks reads {"envelope_id","payload"} frames until the connection fails.
func (s *Server) readAcks(wc *wsConn) {
	for {
		_, data, err := wc.c.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &ack); err != nil || ack.EnvelopeID == "" {
			s.logf("socket %d: unexpected frame %s", wc.id, data)
			continue
		}
		now := time.Now()
		s.mu.Lock()
		if e := s.envelopes[ack.EnvelopeID]; e != nil {
			e.acked = true
		}
		if len(ack.Payload) > 0 {
			s.received = append(s.received, "ack "+ack.EnvelopeID+" "+string(ack.Payload))
		}
		for _, ch := range s.sock.waiters[ack.EnvelopeID] {
			ch <- ackMsg{payload: ack.Payload, at: now} // buffered, one ack per waiter
		}
		delete(s.sock.waiters, ack.EnvelopeID)
		s.mu.Unlock()
		s.logf("socket %d: ack %s %s", wc.id, ack.EnvelopeID, ack.Payload)
	}
}

// waitConns returns the connections the next envelope goes to, waiting for one (a reconnection)
// until ctx is done.
func (s *Server) waitConns(ctx context.Context) ([]*wsConn, error) {
	for {
		s.mu.Lock()
		conns, changed, closed := s.sock.pickLocked(), s.sock.changed, s.sock.closed
		s.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClosed
		case len(conns) > 0:
			return conns, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("fakeslack: no socket mode connection: %w", ctx.Err())
		case <-s.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// pickLocked is the next Fanout (at least one) open connections not told to go away, in turn.
func (ss *sockets) pickLocked() []*wsConn {
	var open, preferred []*wsConn
	for _, wc := range ss.live {
		if !wc.draining {
			open = append(open, wc)
			if ss.prefer != "" && wc.replica == ss.prefer {
				preferred = append(preferred, wc)
			}
		}
	}
	if len(preferred) > 0 {
		open = preferred
	}
	if len(open) == 0 {
		return nil
	}
	n := min(max(ss.fanout, 1), len(open))
	out := make([]*wsConn, 0, n)
	for i := range n {
		out = append(out, open[(ss.next+i)%len(open)])
	}
	ss.next = (ss.next + 1) % len(open)
	return out
}

// WaitConnected waits until a Socket Mode client is connected and has been sent hello.
func (s *Server) WaitConnected(ctx context.Context) error {
	_, err := s.waitConns(ctx)
	return err
}

// ConnectionCount is how many Socket Mode connections have been greeted so far.
func (s *Server) ConnectionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sock.total
}

// SendDisconnect tells the current connection to go away, as Slack does before it rotates hosts.
// New envelopes wait for the client's next connection.
func (s *Server) SendDisconnect() {
	s.mu.Lock()
	wc := s.sock.currentLocked()
	if wc != nil {
		wc.draining = true
		s.sock.notifyLocked()
	}
	s.mu.Unlock()
	if wc == nil {
		return
	}
	frame, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": fmt.Sprintf("fakeslack-%d", wc.id)}})
	if err := wc.write(frame); err != nil {
		s.logf("socket %d: writing disconnect: %v", wc.id, err)
	}
}

// DropConnection closes every live connection's TCP connection without a close frame.
func (s *Server) DropConnection() {
	s.mu.Lock()
	conns := slices.Clone(s.sock.live)
	for _, wc := range conns {
		wc.draining = true
	}
	s.sock.notifyLocked()
	s.mu.Unlock()
	for _, wc := range conns {
		_ = wc.c.Close()
	}
}

func (s *Server) closeSockets() {
	s.mu.Lock()
	s.sock.closed = true
	conns := slices.Clone(s.sock.live)
	s.sock.notifyLocked()
	s.mu.Unlock()
	for _, wc := range conns {
		_ = wc.c.Close()
	}
}

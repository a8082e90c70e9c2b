package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Ack is the app's answer to an envelope.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack carried none
	Latency    time.Duration   // from writing the envelope to reading the ack
}

// envelope is one Socket Mode request; fields are guarded by Server.mu once stored.
type envelope struct {
	id                     string
	typ                    string // events_api, slash_commands, interactive
	payload                json.RawMessage
	acceptsResponsePayload bool
	retryAttempt           int
	retryReason            string
	sent, acked            bool
}

func (e *envelope) marshal() []byte {
	m := map[string]any{"envelope_id": e.id, "type": e.typ, "payload": e.payload,
		"accepts_response_payload": e.acceptsResponsePayload}
	if e.typ == "events_api" {
		m["retry_attempt"], m["retry_reason"] = e.retryAttempt, e.retryReason
	}
	data, _ := json.Marshal(m)
	return data
}

func (s *Server) newEnvelopeLocked(typ string, payload any, acceptsResponse bool) *envelope {
	data, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("fakeslack: marshalling %s payload: %v", typ, err))
	}
	e := &envelope{id: fmt.Sprintf("env-%08d", s.nextSeqLocked()), typ: typ,
		payload: data, acceptsResponsePayload: acceptsResponse}
	s.envelopes[e.id] = e
	return e
}

// deliver sends e to one open connection (or to Fanout of them) and waits for an ack. Slack
// spreads envelopes over an app's connections; so does the fake, in turn. When the connection is
// lost before the ack, or AckTimeout passes, e goes again (to the next connection) with
// retry_attempt+1, as Slack redelivers.
func (s *Server) deliver(ctx context.Context, e *envelope) (Ack, error) {
	for {
		conns, err := s.waitConns(ctx)
		if err != nil {
			return Ack{}, fmt.Errorf("delivering %s %s: %w", e.typ, e.id, err)
		}
		ch := make(chan ackMsg, 1)
		s.mu.Lock()
		s.sock.waiters[e.id] = append(s.sock.waiters[e.id], ch)
		data := e.marshal()
		e.sent = true
		s.mu.Unlock()
		start := time.Now()
		for _, wc := range conns {
			if err := wc.write(data); err != nil {
				_ = wc.c.Close() // the reader notices and retires the connection
			} else {
				s.logf("socket %d: sent %s %s", wc.id, e.typ, e.id)
			}
		}
		if a, acked := s.awaitAck(ctx, ch, conns); acked {
			return Ack{EnvelopeID: e.id, Payload: a.payload, Latency: a.at.Sub(start)}, nil
		}
		s.mu.Lock()
		s.sock.waiters[e.id] = slices.DeleteFunc(s.sock.waiters[e.id], func(x chan ackMsg) bool { return x == ch })
		select {
		case a := <-ch: // the ack won the race
			s.mu.Unlock()
			return Ack{EnvelopeID: e.id, Payload: a.payload, Latency: a.at.Sub(start)}, nil
		default:
		}
		e.retryAttempt++
		e.retryReason = "timeout"
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			return Ack{}, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return Ack{}, fmt.Errorf("waiting for the ack of %s %s: %w", e.typ, e.id, err)
		}
	}
}

// awaitAck waits for the ack on ch; false when every connection it went to closed first, the ack
// timed out, or ctx or the server ended.
func (s *Server) awaitAck(ctx context.Context, ch chan ackMsg, conns []*wsConn) (ackMsg, bool) {
	var timeout <-chan time.Time
	s.mu.Lock()
	wait := s.opts.AckTimeout
	s.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	gone, acked := make(chan struct{}), make(chan struct{})
	defer close(acked) // ends the watcher below once this wait is over
	go func() {
		for _, wc := range conns {
			select {
			case <-wc.done:
			case <-acked:
				return
			}
		}
		close(gone)
	}()
	select {
	case a := <-ch:
		return a, true
	case <-gone:
	case <-timeout:
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
	return ackMsg{}, false
}

// Redeliver sends an earlier envelope again, verbatim but with retry_attempt+1, as Slack does
// when it thinks the app missed it.
func (s *Server) Redeliver(ctx context.Context, envelopeID string) (Ack, error) {
	s.mu.Lock()
	old := s.envelopes[envelopeID]
	if old == nil {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %s", ErrUnknownEnvelope, envelopeID)
	}
	e := *old
	e.retryAttempt++
	e.retryReason = "timeout"
	e.sent, e.acked = false, false
	s.envelopes[envelopeID] = &e
	s.mu.Unlock()
	return s.deliver(ctx, &e)
}

// Unacked returns the ids of envelopes written to a socket whose ack never came, in id order.
func (s *Server) Unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, e := range s.envelopes {
		if e.sent && !e.acked {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

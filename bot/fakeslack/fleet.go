package fakeslack

import (
	"context"
	"fmt"
	"time"
)

// The fake as an app with several Socket Mode connections sees Slack: one process each (replicas
// of the app), every envelope to any one of them.

// APIURLFor is a Web API base for one replica of the app, tagged so that tests can tell which
// replica made a call (Call.Replica) and which connection is whose (its socket URL carries the
// tag too). Slack itself has one URL; the tag is the fake's only addition.
func (s *Server) APIURLFor(replica string) string { return s.srv.URL + "/r/" + replica + "/api/" }

// Fanout makes every envelope from now on go to n open connections at once instead of one (as
// Slack does now and then on a redelivery): the app must run it once. n ≤ 1 restores one.
func (s *Server) Fanout(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sock.fanout = n
}

// Prefer sends every envelope from now on to the given replica's connection while it is open (a
// test choosing which replica receives what); "" restores taking the connections in turn.
func (s *Server) Prefer(replica string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sock.prefer = replica
}

// SetAckTimeout changes Options.AckTimeout for envelopes sent from now on.
func (s *Server) SetAckTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.AckTimeout = d
}

// WaitConnections waits until n connections are open and not told to go away.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		open := 0
		for _, wc := range s.sock.live {
			if !wc.draining {
				open++
			}
		}
		changed := s.sock.changed
		s.mu.Unlock()
		if open >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fakeslack: %d of %d connections: %w", open, n, ctx.Err())
		case <-s.ctx.Done():
			return ErrClosed
		}
	}
}

// Replicas lists the replica tag of each open connection, in connection order.
func (s *Server) Replicas() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, wc := range s.sock.live {
		if !wc.draining {
			out = append(out, wc.replica)
		}
	}
	return out
}

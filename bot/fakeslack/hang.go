package fakeslack

import (
	"context"
	"sync"
)

// hangs hold Web API calls without an answer, as a Slack that stopped
// answering does: the connection stays open and nothing comes back.
type hangs struct {
	mu      sync.Mutex
	methods map[string]chan struct{} // "" holds every method
	held    map[string]int           // calls waiting now, by method
}

// Hang makes calls of method ("" for every Web API method; response_url
// posts are not Web API calls and answer as usual) wait without an answer
// until the returned release is called or the caller gives up.
func (s *Server) Hang(method string) (release func()) { return s.hangs.set(method) }

// HangAfter is Hang for calls Slack carried out whose answer is lost: a
// chat.postMessage is in the channel, and its caller waits on.
func (s *Server) HangAfter(method string) (release func()) { return s.hangsAfter.set(method) }

// Held is how many calls of method Hang holds now (not yet carried out).
func (s *Server) Held(method string) int {
	s.hangs.mu.Lock()
	defer s.hangs.mu.Unlock()
	return s.hangs.held[method]
}

func (h *hangs) set(method string) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.methods == nil {
		h.methods = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	h.methods[method] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			if h.methods[method] == ch {
				delete(h.methods, method)
			}
			h.mu.Unlock()
			close(ch)
		})
	}
}

// hold waits while method is hung; it reports false when ctx (the
// request's) or closed (the server's) ended first.
func (h *hangs) hold(ctx context.Context, closed <-chan struct{}, method string) bool {
	h.mu.Lock()
	ch := h.methods[method]
	if ch == nil {
		ch = h.methods[""]
	}
	if ch != nil {
		if h.held == nil {
			h.held = map[string]int{}
		}
		h.held[method]++
	}
	h.mu.Unlock()
	if ch == nil {
		return true
	}
	defer func() {
		h.mu.Lock()
		h.held[method]--
		h.mu.Unlock()
	}()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	}
}

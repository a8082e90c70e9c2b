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
}

// Hang makes calls of method ("" for every Web API method; response_url
// posts are not Web API calls and answer as usual) wait without an answer
// until the returned release is called or the caller gives up.
func (s *Server) Hang(method string) (release func()) {
	s.hangs.mu.Lock()
	defer s.hangs.mu.Unlock()
	if s.hangs.methods == nil {
		s.hangs.methods = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	s.hangs.methods[method] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.hangs.mu.Lock()
			if s.hangs.methods[method] == ch {
				delete(s.hangs.methods, method)
			}
			s.hangs.mu.Unlock()
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
	h.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	}
}

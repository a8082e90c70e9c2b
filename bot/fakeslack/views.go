package fakeslack

import (
	"context"
	"encoding/json"
)

// maxHomeBlocks is Slack's block limit for a Home tab view (messages: 50).
const maxHomeBlocks = 100

// viewsPublish stores a user's Home tab after checking it as Slack would:
// a known user, a "home" view, blocks within the Block Kit limits.
func (s *Server) viewsPublish(r *apiRequest) reply {
	user := r.get("user_id")
	if !validUser(user) {
		return fail("user_not_found")
	}
	raw, found := r.raw["view"]
	if !found {
		if v := r.get("view"); v != "" {
			raw = json.RawMessage(v)
		}
	}
	var view struct {
		Type   string          `json:"type"`
		Blocks json.RawMessage `json:"blocks"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &view) != nil {
		return fail("invalid_arguments")
	}
	if view.Type != "home" {
		s.violations = append(s.violations, "views.publish: view type "+view.Type+" is not home")
		return fail("invalid_arguments")
	}
	ck := checker{maxBlocks: maxHomeBlocks}
	blocks, parsed := ck.parseBlocks(view.Blocks)
	if parsed {
		ck.blocks(blocks)
	}
	if len(ck.problems) > 0 {
		return s.refuseLocked("views.publish", errInvalidBlocks, ck.problems)
	}
	if s.homeViews == nil {
		s.homeViews = map[string]json.RawMessage{}
	}
	s.homeViews[user] = append(json.RawMessage(nil), raw...)
	return ok(map[string]any{"view": map[string]any{"id": "V" + itoa(s.nextSeqLocked()), "type": "home"}})
}

// HomeView returns the Home tab last published for user (the view JSON), or nil.
func (s *Server) HomeView(user string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), s.homeViews[user]...)
}

// OpenHome delivers the app_home_opened event Slack sends when user opens the app's Home tab.
func (s *Server) OpenHome(ctx context.Context, user string) error {
	s.mu.Lock()
	ts := s.newTSLocked()
	e := s.eventEnvelopeLocked("", map[string]any{"type": "app_home_opened", "user": user,
		"channel": "D" + user, "tab": "home", "event_ts": ts})
	s.mu.Unlock()
	_, err := s.deliver(ctx, e)
	return err
}

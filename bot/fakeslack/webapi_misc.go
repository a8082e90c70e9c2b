package fakeslack

import (
	"fmt"
	"strconv"
)

func (s *Server) authTest(*apiRequest) reply {
	return ok(map[string]any{"url": "https://fake.slack/", "team": "fake", "user": s.userNameLocked(s.opts.BotUserID),
		"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID, "bot_id": s.opts.BotID, "is_enterprise_install": false})
}

// connectionsOpen hands out a single-use websocket URL, like Slack's wss://wss-primary.slack.com/link/?ticket=….
// A replica's API URL (APIURLFor) hands out a socket URL tagged the same way.
func (s *Server) connectionsOpen(r *apiRequest) reply {
	ticket := fmt.Sprintf("t%08d", s.nextSeqLocked())
	s.sock.tickets[ticket] = true
	path := "/ws"
	if r.replica != "" {
		path = "/r/" + r.replica + "/ws"
	}
	return ok(map[string]any{"url": "ws" + s.srv.URL[len("http"):] + path + "?ticket=" + ticket})
}

func (s *Server) conversationsInfo(r *apiRequest) reply {
	id := r.get("channel")
	if !validChannel(id) {
		return fail("channel_not_found")
	}
	return ok(map[string]any{"channel": map[string]any{
		"id": id, "name": s.channelNameLocked(id), "is_channel": id[0] == 'C', "is_group": id[0] == 'G',
		"is_im": id[0] == 'D', "is_private": id[0] != 'C', "is_member": true, "is_archived": false, "created": 1700000000,
	}})
}

func (s *Server) usersInfo(r *apiRequest) reply {
	id := r.get("user")
	if !validUser(id) {
		return fail("user_not_found")
	}
	name := s.userNameLocked(id)
	profile := map[string]any{"real_name": name, "display_name": name}
	if email := s.emails[id]; email != "" {
		profile["email"] = email
	}
	return ok(map[string]any{"user": map[string]any{
		"id": id, "team_id": s.opts.TeamID, "name": name, "real_name": name, "tz": "UTC", "deleted": false,
		"is_bot": id == s.opts.BotUserID, "profile": profile,
	}})
}

func (s *Server) conversationsReplies(r *apiRequest) reply {
	channel := r.get("channel")
	root, found := s.threadRootLocked(channel, r.get("ts"))
	if !found || root == "" {
		return fail("thread_not_found")
	}
	return s.pageLocked(s.store.thread(channel, root), r, 1000)
}

// conversationsHistory lists top-level messages, newest first, as Slack does.
func (s *Server) conversationsHistory(r *apiRequest) reply {
	channel := r.get("channel")
	if !validChannel(channel) {
		return fail("channel_not_found")
	}
	var top []*Message
	all := s.store.byChannel[channel]
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].ThreadTS == "" {
			top = append(top, all[i])
		}
	}
	return s.pageLocked(top, r, 100)
}

// pageLocked answers one page of messages; the cursor is the offset of the next page.
func (s *Server) pageLocked(ms []*Message, r *apiRequest, defLimit int) reply {
	limit, err := strconv.Atoi(r.get("limit"))
	if err != nil || limit <= 0 {
		limit = defLimit
	}
	start, _ := strconv.Atoi(r.get("cursor"))
	start = min(max(start, 0), len(ms))
	end := min(start+limit, len(ms))
	out := make([]map[string]any, 0, end-start)
	for _, m := range ms[start:end] {
		out = append(out, s.messageJSONLocked(m))
	}
	next := ""
	if end < len(ms) {
		next = strconv.Itoa(end)
	}
	return ok(map[string]any{"messages": out, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}})
}

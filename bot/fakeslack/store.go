package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Message is a message as Slack holds it now (after updates).
type Message struct {
	Channel, TS string
	// ThreadTS is the root's ts for a reply; "" for a root or an unthreaded message.
	ThreadTS      string
	User, BotID   string
	Text          string
	Blocks        json.RawMessage // as sent; nil when none
	Updates       int             // number of successful chat.update / replace_original edits
	Ephemeral     bool
	EphemeralUser string
	Reactions     []string // reaction names added by the bot, in order
	Files         []string // ids of the files this message shares (files.completeUploadExternal)
	// Streamed: the message began with chat.startStream; Streaming: it is
	// still open (neither chat.stopStream nor a user's Stop ended it).
	Streamed, Streaming bool
	Appends             int    // successful chat.appendStream calls
	StreamHaltedBy      string // the user whose Stop halted the stream (PressStop)
	// RecipientUser and RecipientTeam are chat.startStream's recipient_user_id and recipient_team_id.
	RecipientUser, RecipientTeam string
}

func (m Message) clone() Message {
	m.Reactions = slices.Clone(m.Reactions)
	m.Files = slices.Clone(m.Files)
	return m
}

// store holds messages; guarded by Server.mu.
type store struct {
	byChannel  map[string][]*Message // non-ephemeral, post order
	byKey      map[string]*Message   // channel/ts
	ephemerals []*Message
	replies    map[string]int // channel/root ts → number of replies
}

func (st *store) init() {
	st.byChannel = map[string][]*Message{}
	st.byKey = map[string]*Message{}
	st.replies = map[string]int{}
}

func key(channel, ts string) string { return channel + "/" + ts }

func (st *store) add(m *Message) {
	if m.Ephemeral {
		st.ephemerals = append(st.ephemerals, m)
		return
	}
	st.byChannel[m.Channel] = append(st.byChannel[m.Channel], m)
	st.byKey[key(m.Channel, m.TS)] = m
	if m.ThreadTS != "" {
		st.replies[key(m.Channel, m.ThreadTS)]++
	}
}

func (st *store) get(channel, ts string) *Message { return st.byKey[key(channel, ts)] }

// getAny finds a message by ts, ephemerals included (buttons can be clicked on either).
func (st *store) getAny(channel, ts string) *Message {
	if m := st.get(channel, ts); m != nil {
		return m
	}
	for _, m := range st.ephemerals {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

func (st *store) remove(channel, ts string) {
	if m := st.byKey[key(channel, ts)]; m != nil && m.ThreadTS != "" {
		st.replies[key(channel, m.ThreadTS)]--
	}
	delete(st.byKey, key(channel, ts))
	st.byChannel[channel] = slices.DeleteFunc(st.byChannel[channel], func(m *Message) bool { return m.TS == ts })
}

// thread returns the root and its replies in post order.
func (st *store) thread(channel, rootTS string) []*Message {
	var out []*Message
	for _, m := range st.byChannel[channel] {
		if m.TS == rootTS || m.ThreadTS == rootTS {
			out = append(out, m)
		}
	}
	return out
}

func (st *store) replyCount(channel, rootTS string) int { return st.replies[key(channel, rootTS)] }

func copyOut(ms []*Message) []Message {
	out := make([]Message, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.clone())
	}
	return out
}

// Messages returns the channel's messages (roots and replies) in post order, ephemerals excluded.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyOut(s.store.byChannel[channel])
}

// Thread returns the root message and its replies in post order.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyOut(s.store.thread(channel, threadTS))
}

// Message returns one stored (non-ephemeral) message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.store.get(channel, ts)
	if m == nil {
		return Message{}, false
	}
	return m.clone(), true
}

// Ephemerals returns the messages only `user` saw in `channel` ("" = any user): chat.postEphemeral,
// ephemeral response_url posts and slash-command ack payloads.
func (s *Server) Ephemerals(channel, user string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.store.ephemerals {
		if m.Channel == channel && (user == "" || m.EphemeralUser == user) {
			out = append(out, m.clone())
		}
	}
	return out
}

// WaitFor polls cond every few milliseconds until it is true or ctx is done.
func (s *Server) WaitFor(ctx context.Context, what string, cond func() bool) error {
	t := time.NewTicker(3 * time.Millisecond)
	defer t.Stop()
	for {
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fakeslack: waiting for %s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

// messageJSON renders a stored message the way the Web API and payloads show it.
func (s *Server) messageJSONLocked(m *Message) map[string]any {
	out := map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "team": s.opts.TeamID}
	if m.User != "" {
		out["user"] = m.User
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
		out["app_id"] = s.opts.AppID
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	if len(m.Files) > 0 {
		out["files"] = s.filesJSONLocked(m.Files)
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
		out["parent_user_id"] = s.parentUserLocked(m)
	} else if n := s.store.replyCount(m.Channel, m.TS); n > 0 && !m.Ephemeral {
		out["thread_ts"] = m.TS
		out["reply_count"] = n
	}
	if m.Updates > 0 {
		out["edited"] = map[string]any{"user": m.User, "ts": m.TS}
	}
	if len(m.Reactions) > 0 {
		var rs []map[string]any
		for _, r := range m.Reactions {
			rs = append(rs, map[string]any{"name": r, "count": 1, "users": []string{s.opts.BotUserID}})
		}
		out["reactions"] = rs
	}
	return out
}

func (s *Server) parentUserLocked(m *Message) string {
	if root := s.store.get(m.Channel, m.ThreadTS); root != nil {
		return root.User
	}
	return ""
}

// Restore adds messages another fake held (a test's earlier run, saved as
// JSON), as Slack would still hold them after the app restarted. Later
// timestamps and ids follow theirs, with room for the ids that fake gave
// its envelopes, so none is handed out twice.
func (s *Server) Restore(msgs []Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		m := m.clone()
		s.store.add(&m)
		var sec, micros int64
		if _, err := fmt.Sscanf(m.TS, "%d.%d", &sec, &micros); err == nil {
			s.seq = max(s.seq, (sec*1_000_000+micros-1_700_000_000_000_000)/100+1000)
		}
	}
}

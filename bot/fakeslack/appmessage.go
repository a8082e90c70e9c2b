package fakeslack

import (
	"context"
	"encoding/json"
)

// AppMessage is a message another app posts (an alerting tool, an
// incoming webhook): Slack sends it as a "message" event of subtype
// bot_message carrying the app's bot_id, its text and its attachments.
type AppMessage struct {
	Channel  string
	ThreadTS string // "" for a top-level message
	BotID    string // the app's bot ID (B…)
	// BotUserID is the app's bot user, when Slack gives one ("" for an
	// incoming webhook).
	BotUserID string
	Username  string
	Text      string
	// Attachments are legacy attachments as Slack sends them: pretext,
	// title, text, fallback, fields.
	Attachments []map[string]any
	// Blocks are Block Kit blocks as the app posted them (nil: none).
	Blocks json.RawMessage
}

// PostAppMessage stores another app's message and delivers its event, as
// Slack does. It returns the message's ts.
func (s *Server) PostAppMessage(ctx context.Context, a AppMessage) (string, error) {
	s.mu.Lock()
	m := &Message{Channel: a.Channel, TS: s.newTSLocked(), ThreadTS: s.threadOfLocked(a.Channel, a.ThreadTS),
		User: a.BotUserID, BotID: a.BotID, Text: a.Text, Blocks: a.Blocks}
	s.store.add(m)
	ev := s.AppMessageEvent(a, m.TS)
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	e := s.eventEnvelopeLocked("", ev)
	s.mu.Unlock()
	_, err := s.deliver(ctx, e)
	return m.TS, err
}

// AppMessageEvent is the message event of a stored app message, as Slack
// sends it again when it redelivers (a new event ID, the same message).
func (s *Server) AppMessageEvent(a AppMessage, ts string) map[string]any {
	ev := map[string]any{"type": "message", "subtype": "bot_message", "channel": a.Channel, "text": a.Text, "ts": ts,
		"event_ts": ts, "channel_type": channelType(a.Channel), "bot_id": a.BotID, "username": a.Username, "team": s.opts.TeamID}
	if a.BotUserID != "" {
		ev["user"] = a.BotUserID
	}
	if len(a.Attachments) > 0 {
		ev["attachments"] = a.Attachments
	}
	if len(a.Blocks) > 0 {
		ev["blocks"] = a.Blocks
	}
	return ev
}

package fakeslack

import "context"

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
}

// PostAppMessage stores another app's message and delivers its event, as
// Slack does. It returns the message's ts.
func (s *Server) PostAppMessage(ctx context.Context, a AppMessage) (string, error) {
	s.mu.Lock()
	m := &Message{Channel: a.Channel, TS: s.newTSLocked(), ThreadTS: s.threadOfLocked(a.Channel, a.ThreadTS),
		User: a.BotUserID, BotID: a.BotID, Text: a.Text}
	s.store.add(m)
	ev := map[string]any{"type": "message", "subtype": "bot_message", "channel": m.Channel, "text": m.Text, "ts": m.TS,
		"event_ts": m.TS, "channel_type": channelType(m.Channel), "bot_id": a.BotID, "username": a.Username, "team": s.opts.TeamID}
	if a.BotUserID != "" {
		ev["user"] = a.BotUserID
	}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	if len(a.Attachments) > 0 {
		ev["attachments"] = a.Attachments
	}
	e := s.eventEnvelopeLocked("", ev)
	s.mu.Unlock()
	_, err := s.deliver(ctx, e)
	return m.TS, err
}

package fakeslack

import (
	"fmt"
	"unicode/utf8"
)

// Streaming messages (chat.startStream, chat.appendStream, chat.stopStream):
// a message in a thread whose text grows with each append and is marked as
// streaming until stopped, by the app or by a user's Stop (PressStop).

// maxMarkdownArg is the most text one markdown_text argument may carry
// (Slack's method reference: "Limit this field to 12,000 characters").
const maxMarkdownArg = 12000

// CannotStream makes channel a conversation type Slack will not stream in:
// the chat.*Stream methods there answer channel_type_not_supported, the
// code Slack's reference lists for them.
func (s *Server) CannotStream(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noStreaming[channel] = true
}

// markdownArgLocked checks one markdown_text argument against its limit;
// the reply is Slack's refusal when it is too long.
func (s *Server) markdownArgLocked(where, text string) (reply, bool) {
	if n := utf8.RuneCountInString(text); n > maxMarkdownArg {
		return s.refuseLocked(where, errMsgTooLong, []string{fmt.Sprintf("markdown_text is %d characters (max %d)", n, maxMarkdownArg)}), false
	}
	return reply{}, true
}

func (s *Server) chatStartStream(r *apiRequest) reply {
	channel, text := r.get("channel"), r.get("markdown_text")
	switch {
	case !validChannel(channel):
		return fail("channel_not_found")
	case s.noStreaming[channel]:
		return fail("channel_type_not_supported")
	case r.get("thread_ts") == "":
		return fail("invalid_arguments") // streamed messages are always replies
	}
	// Outside a DM Slack needs to know whom the stream is for.
	user, team := r.get("recipient_user_id"), r.get("recipient_team_id")
	if channelType(channel) != "im" {
		switch {
		case user == "":
			return fail("missing_recipient_user_id")
		case team == "":
			return fail("missing_recipient_team_id")
		}
	}
	if user != "" && !validUser(user) {
		return fail("user_not_found")
	}
	if rep, valid := s.markdownArgLocked("chat.startStream "+channel, text); !valid {
		return rep
	}
	m := &Message{Channel: channel, TS: s.newTSLocked(), ThreadTS: s.threadOfLocked(channel, r.get("thread_ts")),
		User: s.opts.BotUserID, BotID: s.opts.BotID, Text: text, Streaming: true, Streamed: true,
		RecipientUser: user, RecipientTeam: team}
	s.store.add(m)
	if s.opts.EchoBotMessages {
		s.echoLocked(m)
	}
	return ok(map[string]any{"channel": channel, "ts": m.TS})
}

// openStreamLocked finds the streaming message a chat.appendStream or
// chat.stopStream names, or returns Slack's error code.
func (s *Server) openStreamLocked(r *apiRequest) (*Message, string) {
	channel := r.get("channel")
	switch {
	case !validChannel(channel):
		return nil, "channel_not_found"
	case s.noStreaming[channel]:
		return nil, "channel_type_not_supported"
	}
	m, code := s.botMessageLocked(channel, r.get("ts"), "message_not_owned_by_app")
	switch {
	case code != "":
		return nil, code
	case !m.Streaming:
		return nil, "message_not_in_streaming_state"
	}
	return m, ""
}

// growLocked appends text to a streaming message unless the whole
// message would pass a message's text limit.
func (s *Server) growLocked(where string, m *Message, text string) (reply, bool) {
	if rep, valid := s.markdownArgLocked(where, text); !valid {
		return rep, false
	}
	if n := utf8.RuneCountInString(m.Text + text); n > maxMessageText {
		return s.refuseLocked(where, errMsgTooLong, []string{fmt.Sprintf("streamed message text would be %d characters (max %d)", n, maxMessageText)}), false
	}
	m.Text += text
	return reply{}, true
}

func (s *Server) chatAppendStream(r *apiRequest) reply {
	m, code := s.openStreamLocked(r)
	if code != "" {
		return fail(code)
	}
	text := r.get("markdown_text")
	if text == "" {
		return fail(errNoText)
	}
	if rep, grown := s.growLocked("chat.appendStream "+m.Channel+" "+m.TS, m, text); !grown {
		return rep
	}
	m.Appends++
	return ok(map[string]any{"channel": m.Channel, "ts": m.TS})
}

func (s *Server) chatStopStream(r *apiRequest) reply {
	m, code := s.openStreamLocked(r)
	if code != "" {
		return fail(code)
	}
	status, hasStatus := r.get("session_status"), r.has("session_status")
	if hasStatus && !validStatus(status) {
		return fail("invalid_arguments")
	}
	where := "chat.stopStream " + m.Channel + " " + m.TS
	var ck checker
	blocks, parsed := ck.parseBlocks(r.blocks())
	if parsed {
		ck.blocks(blocks)
	}
	if len(ck.problems) > 0 {
		return s.refuseLocked(where, errInvalidBlocks, ck.problems)
	}
	if rep, grown := s.growLocked(where, m, r.get("markdown_text")); !grown {
		return rep
	}
	if len(blocks) > 0 {
		m.Blocks = normBlocks(r.blocks())
	}
	m.Streaming = false
	// The session moves to session_status, or to Slack's default, active.
	if a := s.agentSessionLocked(m.Channel, m.ThreadTS); a != nil {
		if !hasStatus {
			status = StatusActive
		}
		a.set(status, r.method, r.replica)
	}
	return ok(map[string]any{"channel": m.Channel, "ts": m.TS, "message": s.messageJSONLocked(m)})
}

// StreamText is the text a streaming message holds now ("" when there is
// no such message).
func (s *Server) StreamText(channel, ts string) string {
	m, _ := s.Message(channel, ts)
	return m.Text
}

// StreamOpen reports whether the message at ts is a stream not yet stopped.
func (s *Server) StreamOpen(channel, ts string) bool {
	m, _ := s.Message(channel, ts)
	return m.Streaming
}

// OpenStreams lists the streams still open in a thread, in post order.
func (s *Server) OpenStreams(channel, threadTS string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.store.thread(channel, s.threadOfLocked(channel, threadTS)) {
		if m.Streaming {
			out = append(out, m.TS)
		}
	}
	return out
}

package fakeslack

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// verificationToken is the deprecated token Slack still puts in payloads.
const verificationToken = "fake-verification-token"

// SlashCommand is a slash command invocation; empty fields get defaults
// (Command "/h9", UserID "U1", ChannelID "C1", TeamID the server's, UserName from AddUser or derived).
type SlashCommand struct {
	Command, Text, UserID, UserName, ChannelID, TeamID string
}

// SlashCommand sends a slash_commands envelope and waits for the ack. A message in the ack payload
// is shown like Slack does (ephemeral to the user, or in the channel with response_type in_channel).
func (s *Server) SlashCommand(ctx context.Context, c SlashCommand) (Ack, error) {
	s.mu.Lock()
	c = s.slashDefaultsLocked(c)
	ru := &responseURL{source: "slash command", channel: c.ChannelID, user: c.UserID}
	payload := map[string]any{
		"token": verificationToken, "team_id": c.TeamID, "team_domain": "fake", "channel_id": c.ChannelID,
		"channel_name": s.channelNameLocked(c.ChannelID), "user_id": c.UserID, "user_name": c.UserName,
		"command": c.Command, "text": c.Text, "api_app_id": s.opts.AppID, "is_enterprise_install": "false",
		"response_url": s.newResponseURLLocked(ru), "trigger_id": s.triggerIDLocked(),
	}
	e := s.newEnvelopeLocked("slash_commands", payload, true)
	s.mu.Unlock()
	ack, err := s.deliver(ctx, e)
	if err != nil {
		return ack, err
	}
	s.mu.Lock()
	s.applyAckLocked(ru, ack.Payload)
	s.mu.Unlock()
	return ack, nil
}

func (s *Server) slashDefaultsLocked(c SlashCommand) SlashCommand {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&c.Command, "/h9")
	def(&c.UserID, "U1")
	def(&c.ChannelID, "C1")
	def(&c.TeamID, s.opts.TeamID)
	def(&c.UserName, s.userNameLocked(c.UserID))
	return c
}

func (s *Server) triggerIDLocked() string {
	n := s.nextSeqLocked()
	return strings.Join([]string{itoa(n), itoa(n * 31), "fake"}, ".")
}

// PostUserMessage stores a user's message and delivers its "message" event (threadTS "" for a
// top-level message). It returns the new message's ts.
func (s *Server) PostUserMessage(ctx context.Context, user, channel, threadTS, text string) (string, error) {
	s.mu.Lock()
	m := s.addUserMessageLocked(user, channel, threadTS, text)
	e := s.eventEnvelopeLocked("", s.messageEventLocked(m))
	s.mu.Unlock()
	_, err := s.deliver(ctx, e)
	return m.TS, err
}

// Mention posts a message mentioning the bot (adding "<@BOT> " when text lacks it) and, like Slack,
// delivers both an app_mention and a message event for the same ts.
func (s *Server) Mention(ctx context.Context, user, channel, threadTS, text string) (string, error) {
	s.mu.Lock()
	mention := "<@" + s.opts.BotUserID + ">"
	if !strings.Contains(text, mention) {
		text = mention + " " + text
	}
	m := s.addUserMessageLocked(user, channel, threadTS, text)
	ev := s.messageEventLocked(m)
	ev["type"] = "app_mention"
	delete(ev, "channel_type")
	first := s.eventEnvelopeLocked("", ev)
	second := s.eventEnvelopeLocked("", s.messageEventLocked(m))
	s.mu.Unlock()
	if _, err := s.deliver(ctx, first); err != nil {
		return m.TS, err
	}
	_, err := s.deliver(ctx, second)
	return m.TS, err
}

// SendEvent delivers a raw events_api envelope whose payload wraps inner with the given event_id
// ("" = a fresh one).
func (s *Server) SendEvent(ctx context.Context, eventID string, inner map[string]any) (Ack, error) {
	s.mu.Lock()
	e := s.eventEnvelopeLocked(eventID, inner)
	s.mu.Unlock()
	return s.deliver(ctx, e)
}

func (s *Server) addUserMessageLocked(user, channel, threadTS, text string) *Message {
	m := &Message{Channel: channel, TS: s.newTSLocked(), ThreadTS: s.threadOfLocked(channel, threadTS), User: user, Text: text}
	s.store.add(m)
	return m
}

func channelType(id string) string {
	switch {
	case strings.HasPrefix(id, "D"):
		return "im"
	case strings.HasPrefix(id, "G"):
		return "group"
	default:
		return "channel"
	}
}

// messageEventLocked is the "message" event Slack sends for m.
func (s *Server) messageEventLocked(m *Message) map[string]any {
	ev := map[string]any{"type": "message", "channel": m.Channel, "user": m.User, "text": m.Text, "ts": m.TS,
		"event_ts": m.TS, "channel_type": channelType(m.Channel), "team": s.opts.TeamID}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
		ev["parent_user_id"] = s.parentUserLocked(m)
	}
	if m.BotID != "" {
		ev["bot_id"], ev["app_id"] = m.BotID, s.opts.AppID
		ev["bot_profile"] = map[string]any{"id": m.BotID, "app_id": s.opts.AppID, "name": "h9", "team_id": s.opts.TeamID}
		if len(m.Blocks) > 0 {
			ev["blocks"] = m.Blocks
		}
	} else {
		ev["client_msg_id"] = "cmid-" + m.TS
	}
	return ev
}

func (s *Server) eventEnvelopeLocked(eventID string, inner map[string]any) *envelope {
	if eventID == "" {
		eventID = "Ev" + itoa(s.nextSeqLocked())
	}
	payload := map[string]any{
		"token": verificationToken, "team_id": s.opts.TeamID, "api_app_id": s.opts.AppID, "event": inner,
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID,
			"is_bot": true, "is_enterprise_install": false}},
		"is_ext_shared_channel": false, "event_context": "4-fake-" + eventID,
	}
	return s.newEnvelopeLocked("events_api", payload, false)
}

// echoLocked delivers the bot's own post back as a message event, in the background.
func (s *Server) echoLocked(m *Message) {
	s.sendLaterLocked(s.messageEventLocked(m), m.TS)
}

// echoEditLocked delivers the message_changed event Slack sends after chat.update.
func (s *Server) echoEditLocked(m *Message, prev map[string]any) {
	ts := s.newTSLocked()
	s.sendLaterLocked(map[string]any{"type": "message", "subtype": "message_changed", "hidden": true,
		"channel": m.Channel, "ts": ts, "event_ts": ts, "channel_type": channelType(m.Channel),
		"message": s.messageJSONLocked(m), "previous_message": prev}, m.TS)
}

// sendLaterLocked delivers an event in the background (the Web API answer must not wait for it).
func (s *Server) sendLaterLocked(inner map[string]any, ts string) {
	if s.sock.closed {
		return
	}
	e := s.eventEnvelopeLocked("", inner)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		if _, err := s.deliver(ctx, e); err != nil {
			s.logf("echo of %s: %v", ts, err)
		}
	}()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

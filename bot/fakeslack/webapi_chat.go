package fakeslack

import (
	"encoding/json"
	"slices"
	"strings"
)

func validChannel(id string) bool { return id != "" && strings.ContainsRune("CGD", rune(id[0])) }

func validUser(id string) bool { return id != "" && strings.ContainsRune("UWB", rune(id[0])) }

// normBlocks stores blocks compactly; an empty list counts as none.
func normBlocks(raw json.RawMessage) json.RawMessage {
	var v []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || len(v) == 0 {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

// threadRootLocked resolves thread_ts to the thread's root (a reply's ts means its thread).
func (s *Server) threadRootLocked(channel, threadTS string) (string, bool) {
	if threadTS == "" {
		return "", true
	}
	m := s.store.get(channel, threadTS)
	if m == nil {
		return "", false
	}
	if m.ThreadTS != "" {
		return m.ThreadTS, true
	}
	return m.TS, true
}

// threadOfLocked is the thread a message with this thread_ts joins: the root when the fake knows
// the message (a reply's ts means its thread, as Slack resolves it), else thread_ts as given
// (a root the fake never stored, e.g. one only sent with SendEvent).
func (s *Server) threadOfLocked(channel, threadTS string) string {
	if root, found := s.threadRootLocked(channel, threadTS); found {
		return root
	}
	return threadTS
}

func (s *Server) chatPostMessage(r *apiRequest) reply {
	channel := r.get("channel")
	if !validChannel(channel) {
		return fail("channel_not_found")
	}
	if rep, valid := s.checkLocked("chat.postMessage "+channel, r.content()); !valid {
		return rep
	}
	m := s.postBotMessageLocked(channel, s.threadOfLocked(channel, r.get("thread_ts")), r.get("text"), r.blocks())
	return ok(map[string]any{"channel": channel, "ts": m.TS, "message": s.messageJSONLocked(m)})
}

// postBotMessageLocked stores a message from the bot and echoes it when configured.
func (s *Server) postBotMessageLocked(channel, threadTS, text string, blocks json.RawMessage) *Message {
	m := &Message{Channel: channel, TS: s.newTSLocked(), ThreadTS: threadTS, User: s.opts.BotUserID,
		BotID: s.opts.BotID, Text: text, Blocks: normBlocks(blocks)}
	s.store.add(m)
	if s.opts.EchoBotMessages {
		s.echoLocked(m)
	}
	return m
}

func (s *Server) chatUpdate(r *apiRequest) reply {
	channel, ts := r.get("channel"), r.get("ts")
	m, code := s.botMessageLocked(channel, ts, "cant_update_message")
	if code != "" {
		return fail(code)
	}
	next := content{text: m.Text, blocks: m.Blocks}
	if r.has("text") {
		next.text = r.get("text")
	}
	if r.has("blocks") {
		next.blocks = r.blocks()
	}
	if rep, valid := s.checkLocked("chat.update "+channel+" "+ts, next); !valid {
		return rep
	}
	prev := s.messageJSONLocked(m)
	m.Text, m.Blocks = next.text, normBlocks(next.blocks)
	m.Updates++
	if s.opts.EchoEdits {
		s.echoEditLocked(m, prev)
	}
	return ok(map[string]any{"channel": channel, "ts": ts, "text": m.Text, "message": s.messageJSONLocked(m)})
}

func (s *Server) chatPostEphemeral(r *apiRequest) reply {
	channel, user := r.get("channel"), r.get("user")
	if !validChannel(channel) {
		return fail("channel_not_found")
	}
	if !validUser(user) {
		return fail("user_not_in_channel")
	}
	if rep, valid := s.checkLocked("chat.postEphemeral "+channel, r.content()); !valid {
		return rep
	}
	m := s.addEphemeralLocked(channel, user, r.get("thread_ts"), r.get("text"), r.blocks())
	return ok(map[string]any{"message_ts": m.TS})
}

func (s *Server) addEphemeralLocked(channel, user, threadTS, text string, blocks json.RawMessage) *Message {
	m := &Message{Channel: channel, TS: s.newTSLocked(), ThreadTS: threadTS, User: s.opts.BotUserID,
		BotID: s.opts.BotID, Text: text, Blocks: normBlocks(blocks), Ephemeral: true, EphemeralUser: user}
	s.store.add(m)
	return m
}

func (s *Server) chatDelete(r *apiRequest) reply {
	channel, ts := r.get("channel"), r.get("ts")
	_, code := s.botMessageLocked(channel, ts, "cant_delete_message")
	if code != "" {
		return fail(code)
	}
	s.store.remove(channel, ts)
	return ok(map[string]any{"channel": channel, "ts": ts})
}

// botMessageLocked finds the bot's own message at channel/ts, or returns the
// Slack error code: message_not_found, or refusal when someone else posted it.
func (s *Server) botMessageLocked(channel, ts, refusal string) (*Message, string) {
	m := s.store.get(channel, ts)
	if m == nil {
		return nil, "message_not_found"
	}
	if m.BotID != s.opts.BotID {
		return nil, refusal
	}
	return m, ""
}

func (s *Server) chatGetPermalink(r *apiRequest) reply {
	channel, ts := r.get("channel"), r.get("message_ts")
	m := s.store.get(channel, ts)
	if m == nil {
		return fail("message_not_found")
	}
	return ok(map[string]any{"channel": channel, "permalink": Permalink(channel, ts, m.ThreadTS)})
}

// Permalink is the link chat.getPermalink answers for a message (threadTS "" for a root).
func Permalink(channel, ts, threadTS string) string {
	link := "https://fake.slack/archives/" + channel + "/p" + strings.Replace(ts, ".", "", 1)
	if threadTS != "" {
		link += "?thread_ts=" + threadTS + "&cid=" + channel
	}
	return link
}

func (s *Server) reactionsAdd(r *apiRequest) reply {
	m, name, rep := s.reactionTargetLocked(r)
	if m == nil {
		return rep
	}
	if slices.Contains(m.Reactions, name) {
		return fail("already_reacted")
	}
	m.Reactions = append(m.Reactions, name)
	return ok(nil)
}

func (s *Server) reactionsRemove(r *apiRequest) reply {
	m, name, rep := s.reactionTargetLocked(r)
	if m == nil {
		return rep
	}
	i := slices.Index(m.Reactions, name)
	if i < 0 {
		return fail("no_reaction")
	}
	m.Reactions = slices.Delete(m.Reactions, i, i+1)
	return ok(nil)
}

func (s *Server) reactionTargetLocked(r *apiRequest) (*Message, string, reply) {
	name := strings.Trim(r.get("name"), ":")
	if name == "" {
		return nil, "", fail("invalid_name")
	}
	m := s.store.get(r.get("channel"), r.get("timestamp"))
	if m == nil {
		return nil, "", fail("message_not_found")
	}
	return m, name, reply{}
}

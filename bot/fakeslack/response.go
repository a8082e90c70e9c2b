package fakeslack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// maxResponseURLUses is how many times Slack accepts posts to one response_url.
const maxResponseURLUses = 5

// responseURL is what a slash command or click's response_url answers for; guarded by Server.mu.
type responseURL struct {
	source    string // "slash command" or "block_actions"
	channel   string
	user      string
	messageTS string // the clicked message (block_actions only)
	uses      int
}

// responsePayload is a message sent to a response_url or in a slash-command ack.
type responsePayload struct {
	Text            *string         `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	Attachments     json.RawMessage `json:"attachments"`
	ResponseType    string          `json:"response_type"`
	ThreadTS        string          `json:"thread_ts"`
	ReplaceOriginal bool            `json:"replace_original"`
	DeleteOriginal  bool            `json:"delete_original"`
}

func (p responsePayload) content() content {
	c := content{blocks: p.Blocks}
	if p.Text != nil {
		c.text, c.hasText = *p.Text, true
	}
	att := string(p.Attachments)
	c.hasAttachments = att != "" && att != "null" && att != "[]"
	return c
}

func (s *Server) newResponseURLLocked(ru *responseURL) string {
	id := fmt.Sprintf("r%08d", s.nextSeqLocked())
	s.responses[id] = ru
	return s.srv.URL + "/response/" + id
}

func (s *Server) serveResponseURL(w http.ResponseWriter, hr *http.Request) {
	id := strings.TrimPrefix(hr.URL.Path, "/response/")
	r, err := parseAPIRequest("response_url", hr)
	if err != nil {
		s.finish(w, reply{status: http.StatusBadRequest, body: map[string]any{"ok": false, "error": "invalid_payload"}})
		return
	}
	s.mu.Lock()
	rep := s.handleLocked(r, func() reply {
		ru := s.responses[id]
		if ru == nil {
			return reply{status: http.StatusNotFound, body: map[string]any{"ok": false, "error": "expired_url"}}
		}
		ru.uses++
		if ru.uses > maxResponseURLUses {
			s.violations = append(s.violations, fmt.Sprintf("response_url of a %s used %d times (max %d)", ru.source, ru.uses, maxResponseURLUses))
			return fail("used_url")
		}
		var p responsePayload
		if err := json.Unmarshal(r.body, &p); err != nil {
			return fail("invalid_payload")
		}
		return s.applyResponseLocked(ru, p, "response_url of a "+ru.source)
	})
	s.mu.Unlock()
	s.finish(w, rep)
}

// applyResponseLocked does what Slack does with a response_url post or a slash-command ack payload.
func (s *Server) applyResponseLocked(ru *responseURL, p responsePayload, where string) reply {
	if p.DeleteOriginal {
		if m := s.store.get(ru.channel, ru.messageTS); m != nil {
			s.store.remove(ru.channel, ru.messageTS)
		}
		return ok(nil)
	}
	c := p.content()
	if rep, valid := s.checkLocked(where+" "+ru.channel, c); !valid {
		return rep
	}
	switch {
	case p.ReplaceOriginal && ru.messageTS != "":
		m := s.store.getAny(ru.channel, ru.messageTS)
		if m == nil {
			return fail("message_not_found")
		}
		m.Text, m.Blocks = c.text, normBlocks(c.blocks)
		m.Updates++
	case p.ResponseType == "in_channel":
		s.postBotMessageLocked(ru.channel, s.threadOfLocked(ru.channel, p.ThreadTS), c.text, c.blocks)
	default:
		s.addEphemeralLocked(ru.channel, ru.user, p.ThreadTS, c.text, c.blocks)
	}
	return ok(nil)
}

// applyAckLocked treats a non-empty slash-command ack payload as Slack does: an immediate response.
func (s *Server) applyAckLocked(ru *responseURL, payload json.RawMessage) {
	if len(payload) == 0 || string(payload) == "null" || string(payload) == "{}" {
		return
	}
	var p responsePayload
	if err := json.Unmarshal(payload, &p); err != nil {
		s.violations = append(s.violations, "slash command ack payload is not a message object: "+err.Error())
		return
	}
	s.applyResponseLocked(ru, p, "slash command ack")
}

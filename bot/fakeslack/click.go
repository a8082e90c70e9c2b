package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
)

// Click is a click on a block element. Empty ThreadTS is taken from the stored message.
type Click struct {
	UserID, ChannelID, MessageTS, ThreadTS, ActionID, BlockID, Value string
}

// button is a button found in a message's blocks.
type button struct {
	blockID, actionID, value, text string
}

// findButton looks for the button with actionID in section accessories and actions blocks.
// A block without block_id gets the id Slack would show for it ("b<index>" here).
func findButton(blocks json.RawMessage, actionID string) (button, bool) {
	var bs []struct {
		Type      string            `json:"type"`
		BlockID   string            `json:"block_id"`
		Elements  []json.RawMessage `json:"elements"`
		Accessory json.RawMessage   `json:"accessory"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return button{}, false
	}
	for i, b := range bs {
		els := b.Elements
		if b.Type != "actions" {
			els = nil
		}
		if len(b.Accessory) > 0 {
			els = append(els, b.Accessory)
		}
		for _, raw := range els {
			var e struct {
				Type     string `json:"type"`
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
				Text     struct {
					Text string `json:"text"`
				} `json:"text"`
			}
			if json.Unmarshal(raw, &e) != nil || e.Type != "button" || e.ActionID != actionID {
				continue
			}
			id := b.BlockID
			if id == "" {
				id = fmt.Sprintf("b%d", i)
			}
			return button{blockID: id, actionID: e.ActionID, value: e.Value, text: e.Text.Text}, true
		}
	}
	return button{}, false
}

// ClickButton clicks the button with actionID in a stored message (ephemerals included),
// using its block_id and value.
func (s *Server) ClickButton(ctx context.Context, user, channel, messageTS, actionID string) (Ack, error) {
	s.mu.Lock()
	m := s.store.getAny(channel, messageTS)
	var b button
	found := false
	if m != nil {
		b, found = findButton(m.Blocks, actionID)
	}
	s.mu.Unlock()
	switch {
	case m == nil:
		return Ack{}, fmt.Errorf("%w: %s/%s", ErrMessageNotFound, channel, messageTS)
	case !found:
		return Ack{}, fmt.Errorf("%w: %q in %s/%s", ErrButtonNotFound, actionID, channel, messageTS)
	}
	return s.Click(ctx, Click{UserID: user, ChannelID: channel, MessageTS: messageTS,
		ActionID: actionID, BlockID: b.blockID, Value: b.value})
}

// Click sends an interactive block_actions envelope shaped like Slack's and waits for the ack.
func (s *Server) Click(ctx context.Context, c Click) (Ack, error) {
	s.mu.Lock()
	e := s.newEnvelopeLocked("interactive", s.blockActionsLocked(c), false)
	s.mu.Unlock()
	return s.deliver(ctx, e)
}

func (s *Server) blockActionsLocked(c Click) map[string]any {
	m := s.store.getAny(c.ChannelID, c.MessageTS)
	text := c.ActionID
	if m != nil {
		if b, ok := findButton(m.Blocks, c.ActionID); ok {
			text = b.text
		}
		if c.ThreadTS == "" {
			c.ThreadTS = m.ThreadTS
		}
	}
	actionTS := s.newTSLocked()
	action := map[string]any{"type": "button", "action_id": c.ActionID, "block_id": c.BlockID,
		"text": map[string]any{"type": "plain_text", "text": text, "emoji": true}, "action_ts": actionTS}
	if c.Value != "" {
		action["value"] = c.Value
	}
	ephemeral := m != nil && m.Ephemeral
	container := map[string]any{"type": "message", "message_ts": c.MessageTS, "channel_id": c.ChannelID,
		"is_ephemeral": ephemeral}
	if c.ThreadTS != "" {
		container["thread_ts"] = c.ThreadTS
	}
	ru := &responseURL{source: "block_actions", channel: c.ChannelID, user: c.UserID, messageTS: c.MessageTS}
	name := s.userNameLocked(c.UserID)
	p := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": c.UserID, "username": name, "name": name, "team_id": s.opts.TeamID},
		"api_app_id": s.opts.AppID, "token": verificationToken, "container": container,
		"trigger_id": s.triggerIDLocked(), "team": map[string]any{"id": s.opts.TeamID, "domain": "fake"},
		"is_enterprise_install": false,
		"channel":               map[string]any{"id": c.ChannelID, "name": s.channelNameLocked(c.ChannelID)},
		"state":                 map[string]any{"values": map[string]any{}},
		"response_url":          s.newResponseURLLocked(ru),
		"actions":               []any{action},
	}
	if m != nil && !ephemeral {
		p["message"] = s.messageJSONLocked(m)
	}
	return p
}

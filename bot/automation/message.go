package automation

import (
	"strings"

	"github.com/h9-app/h9/workspace/textcut"
)

// The message trigger (ARCHITECTURE.md, "Automations"): a message in the
// watched channel, from a listed person (user ID) or another app (its
// bot_id or its bot user ID), whose text, blocks' text or attachments'
// text matches starts a session in that message's thread.

// Message is a Slack message as the trigger sees it.
type Message struct {
	Channel string
	TS      string
	// ThreadTS is set on a reply; a reply never triggers (the session's
	// thread is the message's own).
	ThreadTS string
	User     string // the author's user ID (a bot's bot user ID when Slack gives it)
	BotID    string // another app's bot ID, "" for a person
	// Texts are the message's text, its blocks' text and its attachments'
	// text (fallback, pretext, title, text, fields).
	Texts []string
}

// maxMessageData bounds the message text given to the model.
const maxMessageData = 16 << 10

// Text is all of the message's text, one part a line.
func (m Message) Text() string {
	var parts []string
	for _, t := range m.Texts {
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// Matches reports whether m starts a session of a (a message trigger).
func (a *Automation) Matches(m Message) bool {
	t := a.Trigger
	if t.Kind != KindMessage || a.match == nil || m.Channel != t.Watch || m.TS == "" {
		return false
	}
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		return false
	}
	from := false
	for _, id := range t.From {
		if id != "" && (id == m.User || id == m.BotID) {
			from = true
			break
		}
	}
	return from && a.match.MatchString(m.Text())
}

// MessageKeys are m's occurrence key (the message's ts) and its dedupe
// key (the dedupe regexp's first group, "" without one or no match).
func (a *Automation) MessageKeys(m Message) (key, dedupe string) {
	key = "message:" + m.Channel + ":" + m.TS
	if a.dedupeRE != nil {
		if g := a.dedupeRE.FindStringSubmatch(m.Text()); len(g) > 1 && strings.TrimSpace(g[1]) != "" {
			dedupe = boundKey(strings.TrimSpace(g[1]))
		}
	}
	return key, dedupe
}

// MessageRequest is the session's request: the task, then the message's
// text fenced as data.
func (a *Automation) MessageRequest(m Message) string {
	return Request(a.Task, DataMessage, textcut.HeadTail(m.Text(), maxMessageData))
}

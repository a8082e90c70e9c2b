package bot

import (
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/h9-app/h9/bot/render"
)

// eventsAPIKind is the Events API envelopes' type, as metrics name it.
const eventsAPIKind = string(socketmode.EventTypeEventsAPI)

// inbound is a user message from the Events API, either event type.
type inbound struct {
	user, text, channel, ts, threadTS string
	mention                           bool
	files                             []sharedFile // shared on the message (attachments.go)
}

// onEventsAPI routes app_mention and message events. Runs on the socket
// loop: only parsing, dedup and an inbox append, or a goroutine.
func (b *Bot) onEventsAPI(ev slackevents.EventsAPIEvent, req *socketmode.Request) {
	cb, _ := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if cb != nil {
		b.learnBotUser(cb)
	}
	if e, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent); ok {
		b.onAutomationMessage(e) // automations.go: other apps' messages included
	}
	if ignored(ev.InnerEvent.Data) {
		return // nothing to do, so nothing to remember for dedup
	}
	keys := envelopeKeys(req)
	if cb != nil && cb.EventID != "" {
		keys = append(keys, "ev:"+cb.EventID)
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		b.onMessage(inbound{user: e.User, text: e.Text, channel: e.Channel,
			ts: e.TimeStamp, threadTS: e.ThreadTimeStamp, mention: true, files: filesOf(e.Files)}, keys)
	case *slackevents.AppHomeOpenedEvent:
		if e.Tab == "home" && e.User != "" {
			b.admit(eventsAPIKind, keys, func() { b.afterAck(func() { b.publishHome(e.User) }) })
		}
	case *slackevents.MessageEvent:
		b.onMessage(inbound{user: e.User, text: e.Text, channel: e.Channel,
			ts: e.TimeStamp, threadTS: e.ThreadTimeStamp, mention: b.mentionsMe(e.Text), files: messageFiles(e)}, keys)
	case *slackevents.AgentSessionStoppedEvent:
		b.onAgentSessionStopped(e, keys) // surfaces.go
	}
}

// ignored reports events that never lead to work: the echoes of the bot's
// own posts (every one of them comes back as a message event), message
// subtypes (edits, deletions, joins…) and edited mentions.
func ignored(data any) bool {
	switch e := data.(type) {
	case *slackevents.AppMentionEvent:
		return e.BotID != "" || e.Edited != nil
	case *slackevents.MessageEvent:
		return (e.SubType != "" && e.SubType != subtypeFileShare) || e.BotID != ""
	}
	return false
}

// onMessage handles one user message, once per (channel, ts): Slack sends a
// mention both as app_mention and as message. keys are its envelope's.
func (b *Bot) onMessage(m inbound, keys []string) {
	if m.user == "" || m.user == b.botUserID || m.ts == "" {
		return
	}
	if !m.mention && (m.threadTS == "" || m.threadTS == m.ts) {
		// Channel chatter, not a thread reply. Checked before the dedup key
		// is taken: when the bot's id is unknown, a mention's message event
		// looks like chatter and must not swallow its app_mention twin.
		return
	}
	key := "msg:" + m.channel + "/" + m.ts
	if !m.mention && b.botUserID == "" && mentionRE.MatchString(m.text) {
		// The bot's id is unknown, so this reply may be a mention of h9 whose
		// app_mention is still to come. It goes to the thread's session as a
		// reply under its own key, leaving the pair's key to the app_mention
		// (which starts a session where there is none; an actor skips a ts
		// it already took as a reply).
		if b.seen.has(key) {
			return
		}
		key = "maybe:" + m.channel + "/" + m.ts
	}
	b.admit(eventsAPIKind, append(keys, key), func() { b.route(m) })
}

// route hands an admitted user message to its thread's session.
func (b *Bot) route(m inbound) {
	root := m.threadTS
	if root == "" {
		root = m.ts
	}
	thread := threadKey{channel: m.channel, ts: root}
	if !m.mention {
		b.reg.deliver(thread, msgReply{user: m.user, text: cleanTask(m.text), ts: m.ts, files: m.files})
		return
	}
	log := b.log.With("channel", m.channel, "thread", root, "user", m.user)
	if why := b.perms.refusal(m.user, m.channel); why != "" {
		b.afterAck(func() { b.api.PostEphemeral(b.bg, log, m.channel, m.user, m.threadTS, text(why)) })
		return
	}
	task := b.stripMention(m.text)
	switch {
	case strings.EqualFold(task, verbStatus) && m.threadTS != "":
		b.reg.deliver(thread, msgStatus{user: m.user})
	case strings.EqualFold(task, verbStatus):
		b.afterAck(func() { b.postChannelStatus(m.channel, m.user, "", "") })
	case task == "" || strings.EqualFold(task, verbHelp):
		b.afterAck(func() {
			b.api.PostEphemeral(b.bg, log, m.channel, m.user, m.threadTS, usage("Mention me with a task, e.g. `@h9 add a /healthz endpoint`."))
		})
	default:
		b.reg.deliver(thread, msgMention{team: b.sessionTeam(), user: m.user, text: task, ts: m.ts, files: m.files})
	}
}

// learnBotUser takes the bot's user id from an event's authorizations when
// auth.test could not give it, so its mentions are recognised in message
// events and its own messages ignored. Runs on the socket loop, the only
// reader of botUserID.
func (b *Bot) learnBotUser(cb *slackevents.EventsAPICallbackEvent) {
	if b.botUserID != "" {
		return
	}
	for _, a := range cb.Authorizations {
		if a.IsBot && a.UserID != "" {
			b.botUserID = a.UserID
			b.log.Info("bot user id learned from an event's authorizations", "bot_user", a.UserID)
			return
		}
	}
}

// mentionRE matches a user mention, optionally with a label: <@U123> or <@U123|name>.
var mentionRE = regexp.MustCompile(`<@([A-Z0-9]+)(\|[^>]*)?>`)

// mentionsMe reports whether text mentions the bot user.
func (b *Bot) mentionsMe(text string) bool {
	if b.botUserID == "" {
		return false
	}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		if m[1] == b.botUserID {
			return true
		}
	}
	return false
}

// stripMention removes the bot's mentions (or, when the bot's id is
// unknown, the leading mention) and trims.
func (b *Bot) stripMention(text string) string {
	if b.botUserID == "" {
		if loc := mentionRE.FindStringIndex(strings.TrimSpace(text)); loc != nil && loc[0] == 0 {
			return cleanTask(strings.TrimSpace(text)[loc[1]:])
		}
		return cleanTask(text)
	}
	out := mentionRE.ReplaceAllStringFunc(text, func(s string) string {
		if mentionRE.FindStringSubmatch(s)[1] == b.botUserID {
			return ""
		}
		return s
	})
	return cleanTask(out)
}

// onInteraction routes button clicks to their session's actor. A value
// that does not decode, or an action id h9 never rendered, is refused here;
// whether the session exists and the clicker may act is the actor's call.
func (b *Bot) onInteraction(cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	user, channel := cb.User.ID, cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	log := b.log.With("channel", channel, "user", user)
	for _, a := range cb.ActionCallback.BlockActions {
		if a.ActionID == automationResumeAction {
			b.onAutomationResume(user, channel, a.Value) // automations_commands.go
			continue
		}
		v, err := render.DecodeButtonValue(a.Value)
		thread, ok := threadOf(v.SessionID)
		if err != nil || !ok || !knownAction(a.ActionID) {
			log.Warn("refused a click with an unknown action or value", "action", a.ActionID, "err", err)
			b.afterAck(func() {
				b.api.PostEphemeral(b.bg, log, channel, user, "", text("That button is not one h9 recognises, so nothing happened."))
			})
			continue
		}
		if why := b.perms.refusal(user, channel); why != "" {
			b.afterAck(func() { b.api.PostEphemeral(b.bg, log, channel, user, "", text(why)) })
			continue
		}
		b.reg.deliver(thread, msgAction{user: user, channel: channel, action: a.ActionID, value: v})
	}
}

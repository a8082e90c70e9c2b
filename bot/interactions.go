package bot

import (
	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

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

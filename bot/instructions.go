package bot

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

// Instructions per channel (ARCHITECTURE.md, "Instructions per channel"):
// `/h9 instructions [set <text> | clear]`, kept as a channel setting and
// given to the agent with every run of the channel's sessions, after
// AGENTS.md.

const (
	verbInstructions = "instructions"
	// instructionsSetting is the channel setting that holds them.
	instructionsSetting = "instructions"
	// MaxInstructions is the most characters a channel's instructions hold.
	MaxInstructions = 4000
	// instructionsTimeout bounds the read a run makes of them.
	instructionsTimeout = 10 * time.Second
)

const instructionsUsage = "`/h9 instructions` shows this channel's instructions, `/h9 instructions set <text>` replaces them, `/h9 instructions clear` removes them."

// instructionsAck checks the command before the ack: the sub-command, the
// length, and who may change them (admins when H9_ADMINS is set).
func (b *Bot) instructionsAck(user, arg string) (why string) {
	sub, rest := parseCommand(arg)
	switch {
	case sub == "":
		return ""
	case sub != "set" && sub != "clear":
		return "Sorry, I did not understand that. " + instructionsUsage
	case sub == "clear" && rest != "":
		return "`/h9 instructions clear` takes nothing after it. " + instructionsUsage
	case sub == "set" && rest == "":
		return "`/h9 instructions set` needs the text, e.g. `/h9 instructions set This channel is the payments service: never touch migrations.`"
	case len(b.perms.admins) > 0 && !b.perms.admins[user]:
		return "Only an h9 admin (H9_ADMINS) can change this channel's instructions. `/h9 instructions` shows them."
	case utf8.RuneCountInString(rest) > MaxInstructions:
		return "Those instructions are " + strconv.Itoa(utf8.RuneCountInString(rest)) + " characters; a channel's instructions hold at most " +
			strconv.Itoa(MaxInstructions) + ". Nothing was changed."
	}
	return ""
}

// runInstructionsCommand shows, replaces or clears the channel's
// instructions, after the ack.
func (b *Bot) runInstructionsCommand(cmd slack.SlashCommand, arg string, log *slog.Logger) {
	answer := func(m render.Message) { b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, m) }
	sub, rest := parseCommand(arg)
	if sub == "" {
		v, err := b.store.ChannelSetting(b.bg, cmd.ChannelID, instructionsSetting)
		if err != nil {
			log.Error("reading the channel's instructions", "err", err)
			answer(text("h9 could not read this channel's instructions just now; try again in a moment."))
			return
		}
		answer(render.RenderInstructions(cmd.ChannelID, v))
		return
	}
	value, done := rest, "Saved. Every new session in this channel gets these instructions after AGENTS.md."
	if sub == "clear" {
		value, done = "", "Cleared: sessions in this channel get no channel instructions."
	}
	if err := b.store.SetChannelSetting(b.bg, cmd.ChannelID, instructionsSetting, value); err != nil {
		log.Error("saving the channel's instructions", "err", err)
		answer(text("h9 could not save this channel's instructions just now; nothing was changed. Try again in a moment."))
		return
	}
	log.Info("channel instructions changed", "cleared", value == "", "chars", utf8.RuneCountInString(value))
	answer(text(done))
}

// channelInstructions is what a run of a session in channel gives the
// agent; a store that does not answer leaves them out (logged).
func (b *Bot) channelInstructions(ctx context.Context, log *slog.Logger, channel string) string {
	ctx, cancel := context.WithTimeout(ctx, instructionsTimeout)
	defer cancel()
	v, err := b.store.ChannelSetting(ctx, channel, instructionsSetting)
	if err != nil {
		log.Warn("the channel's instructions could not be read; the run goes without them", "err", err)
		return ""
	}
	return strings.TrimSpace(v)
}

// homeInstructions are the instructions of the channels of the Home tab's
// sessions, in the order the sessions come.
func (b *Bot) homeInstructions(log *slog.Logger, rows []render.HomeRow) []render.ChannelInstructions {
	var out []render.ChannelInstructions
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.Channel] || r.Channel == "" {
			continue
		}
		seen[r.Channel] = true
		if v := b.channelInstructions(b.bg, log, r.Channel); v != "" {
			out = append(out, render.ChannelInstructions{Channel: r.Channel, Text: v})
		}
	}
	return out
}

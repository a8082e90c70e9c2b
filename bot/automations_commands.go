package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/render"
)

// /h9 automations lists this channel's automations (in a DM with h9, all
// of them); pause, resume and run act on one, for its owner or an admin
// (ARCHITECTURE.md, "Automations").

// runAutomationsCommand does /h9 automations after the ack.
func (b *Bot) runAutomationsCommand(cmd slack.SlashCommand, arg string, log *slog.Logger) {
	say := func(s string) { b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text(s)) }
	if b.autos == nil {
		say("h9 has no automations (H9_AUTOMATIONS_FILE, or a repository's .h9/automations.yaml).")
		return
	}
	ctx, cancel := context.WithTimeout(b.bg, time.Minute)
	defer cancel()
	verb, name := parseCommand(arg)
	if verb == "" || verb == "list" {
		channel := cmd.ChannelID
		if strings.HasPrefix(channel, "D") {
			channel = "" // a DM with h9: all of them
		}
		entries, err := b.autos.List(ctx, channel)
		if err != nil {
			log.Warn("listing automations failed", "err", err)
			say("h9 could not read its automations just now; try again in a moment.")
			return
		}
		say(b.renderAutomations(ctx, log, entries))
		return
	}
	a := b.autos.Get(name)
	switch {
	case verb != "pause" && verb != "resume" && verb != "run":
		say("`/h9 automations` lists them; `/h9 automations pause|resume|run <name>` acts on one.")
		return
	case a == nil:
		say(fmt.Sprintf("There is no automation `%s`. `/h9 automations` lists them.", render.Escape(name)))
		return
	case !b.mayActOn(a, cmd.UserID):
		say(fmt.Sprintf("Only *%s*'s owner or h9's admins may %s it.", render.Escape(a.Name), verb))
		return
	}
	switch verb {
	case "run":
		out, err := b.autos.RunNow(ctx, a.Name, cmd.UserID)
		switch {
		case err != nil:
			log.Warn("running an automation failed", "automation", a.Name, "err", err)
			say("h9 could not record the run just now; try again in a moment.")
		case out.Result == automation.ResultStarted:
			say(fmt.Sprintf("*%s* started: %s", render.Escape(a.Name), out.Link))
		default:
			say(fmt.Sprintf("*%s* did not start: %s.", render.Escape(a.Name), firstOf(out.Why, out.Result)))
		}
	default:
		if err := b.autos.SetPaused(ctx, a.Name, cmd.UserID, verb == "pause"); err != nil {
			say("h9 could not save that just now; try again in a moment.")
			return
		}
		b.sayPaused(ctx, log, a, cmd.UserID, verb == "pause")
	}
}

// mayActOn: the automation's owner, or an admin.
func (b *Bot) mayActOn(a *automation.Automation, user string) bool {
	return user != "" && (user == a.Owner || b.perms.admins[user])
}

// sayPaused tells the automation's channel who paused or resumed it.
func (b *Bot) sayPaused(ctx context.Context, log *slog.Logger, a *automation.Automation, user string, paused bool) {
	word := "resumed"
	if paused {
		word = "paused"
	}
	msg := fmt.Sprintf("<@%s> %s *%s*.", user, word, render.Escape(a.Name))
	if _, err := b.api.PostMessage(ctx, log, a.Channel, "", text(msg)); err != nil {
		log.Warn("saying an automation's pause failed", "automation", a.Name, "err", err)
	}
}

// onAutomationResume is the Resume button of a pause message.
func (b *Bot) onAutomationResume(user, channel, name string) {
	b.afterAck(func() {
		log := b.log.With("channel", channel, "user", user, "automation", name)
		var a *automation.Automation
		if b.autos != nil {
			a = b.autos.Get(name)
		}
		switch {
		case a == nil:
			b.api.PostEphemeral(b.bg, log, channel, user, "", text("That automation is not defined any more, so nothing happened."))
			return
		case !b.mayActOn(a, user):
			b.api.PostEphemeral(b.bg, log, channel, user, "", text(fmt.Sprintf("Only *%s*'s owner or h9's admins may resume it.", render.Escape(a.Name))))
			return
		}
		ctx, cancel := context.WithTimeout(b.bg, time.Minute)
		defer cancel()
		if err := b.autos.SetPaused(ctx, a.Name, user, false); err != nil {
			b.api.PostEphemeral(b.bg, log, channel, user, "", text("h9 could not save that just now; try again in a moment."))
			return
		}
		b.sayPaused(ctx, log, a, user, false)
	})
}

// renderAutomations is the listing: name, trigger, next occurrence, last
// session, paused or not.
func (b *Bot) renderAutomations(ctx context.Context, log *slog.Logger, entries []automation.Entry) string {
	if len(entries) == 0 {
		return "No automation starts sessions here. In a DM with h9, `/h9 automations` lists them all."
	}
	var sb strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&sb, "• *%s* — %s", render.Escape(e.A.Name), e.A.Describe())
		if !e.Next.IsZero() {
			fmt.Fprintf(&sb, " · next %s", e.Next.In(e.A.Zone).Format("Mon 2 Jan 15:04 MST"))
		}
		if e.LastThread != "" {
			fmt.Fprintf(&sb, " · last session %s", b.api.Permalink(ctx, log, e.LastChannel, e.LastThread))
			if state := b.sessionStateIn(ctx, e.LastChannel, e.LastThread); state != "" {
				fmt.Fprintf(&sb, " (%s)", state)
			}
		}
		if e.Paused {
			fmt.Fprintf(&sb, " · *paused* by %s", pausedBy(e.PausedBy))
		} else {
			sb.WriteString(" · active")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// sessionStateIn is the thread's session's state in the words /h9 status
// uses ("planning", "awaiting review", "running", "done", "stalled",
// "cancelled"…); "starting" when its record is not stored yet (its first
// commit is on its way), "" when the store cannot say.
func (b *Bot) sessionStateIn(ctx context.Context, channel, thread string) string {
	rec, err := b.store.FindThread(ctx, channel, thread)
	if errors.Is(err, store.ErrNotFound) {
		return "starting"
	}
	if err != nil {
		return ""
	}
	sess, err := decodeSession(rec)
	if err != nil {
		return ""
	}
	return sess.stateLabel()
}

func pausedBy(who string) string {
	if who == "" || who == "h9" {
		return "h9 after three failed starts"
	}
	return "<@" + who + ">"
}

// homeAutomations is the Home tab's list of every automation; none when
// there is none.
func (b *Bot) homeAutomations(ctx context.Context, log *slog.Logger) []slack.Block {
	if b.autos == nil {
		return nil
	}
	entries, err := b.autos.List(ctx, "")
	if err != nil || len(entries) == 0 {
		if err != nil {
			log.Warn("home tab: listing automations", "err", err)
		}
		return nil
	}
	list := render.Truncate("*Automations*\n"+b.renderAutomations(ctx, log, entries), 2900)
	return []slack.Block{slack.NewDividerBlock(),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, list, false, false), nil, nil, slack.SectionBlockOptionBlockID("h9_home_automations"))}
}

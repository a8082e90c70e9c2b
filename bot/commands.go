package bot

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/bot/slackapi"
	"github.com/h9-app/h9/planning"
)

// Slash command verbs.
const (
	verbPlan   = "plan"
	verbRun    = "run"
	verbStatus = "status"
	verbHelp   = "help"
	verbRepo   = "repo"
	verbRepos  = "repos"
)

// maxAckBytes keeps ack payloads under Socket Mode's 20 KiB limit.
const maxAckBytes = 16 * 1024

// parseCommand splits "/h9" text into a lower-case verb and the rest.
func parseCommand(text string) (verb, arg string) {
	text = strings.TrimSpace(text)
	i := strings.IndexFunc(text, unicode.IsSpace)
	if i < 0 {
		return strings.ToLower(text), ""
	}
	return strings.ToLower(text[:i]), strings.TrimSpace(text[i:])
}

// commandAck decides, without I/O, what the ack carries and whether the
// command has work to do after the ack.
func (b *Bot) commandAck(cmd slack.SlashCommand) (payload any, work bool) {
	if why := b.perms.refusal(cmd.UserID, cmd.ChannelID); why != "" {
		return ephemeralAck(text(why)), false
	}
	verb, arg := parseCommand(cmd.Text)
	switch {
	case verb == verbHelp:
		return ephemeralAck(render.RenderHelp()), false
	case verb == verbStatus, verb == verbAutomations:
		return nil, true
	case verb == verbRepos && arg != "":
		if why := b.forgetAck(cmd.UserID, arg); why != "" {
			return ephemeralAck(text(why)), false
		}
		return nil, true
	case verb == verbRepos:
		return ephemeralAck(b.renderRepos()), false
	case verb == verbRepo:
		if why := b.checkRepoArg(arg); why != "" {
			return ephemeralAck(text(why)), false
		}
		return nil, true
	case verb == verbInstructions:
		if why := b.instructionsAck(cmd.UserID, arg); why != "" {
			return ephemeralAck(text(why)), false
		}
		return nil, true
	case (verb == verbPlan || verb == verbRun) && arg != "":
		return b.taskAck(verb, arg)
	case verb == verbPlan || verb == verbRun:
		return ephemeralAck(usage("`/h9 " + verb + "` needs a task, e.g. `/h9 " + verb + " add a /healthz endpoint`.")), false
	case verb == "":
		return ephemeralAck(usage("Tell h9 what to do.")), false
	}
	return ephemeralAck(render.RenderUsage(cmd.Text)), false
}

// taskAck checks a task's options block before the ack: an options block
// that does not parse, an unknown repository or a bad branch is refused
// at once and no session starts.
func (b *Bot) taskAck(verb, arg string) (any, bool) {
	opts, task, err := splitOptions(arg)
	if err == nil {
		err = b.checkOptions(opts)
	}
	switch {
	case err != nil:
		return ephemeralAck(text("h9 did not start a session: " + err.Error() + ".")), false
	case task == "":
		return ephemeralAck(usage("`/h9 " + verb + "` needs a task after the options, e.g. `/h9 " + verb + " [repo=backend] fix the login test`.")), false
	}
	return nil, true
}

// usage is a short explanation followed by the help text.
func usage(lead string) render.Message {
	help := render.RenderHelp()
	help.Text = lead + "\n" + help.Text
	if len(help.Blocks) > 0 {
		help.Blocks = append([]slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, lead, false, false), nil, nil, slack.SectionBlockOptionBlockID("h9_usage_lead"))}, help.Blocks...)
	}
	return help
}

// ephemeralAck is a slash command response shown only to the caller.
func ephemeralAck(m render.Message) map[string]any {
	p := map[string]any{"response_type": "ephemeral", "text": m.Text}
	if len(m.Blocks) > 0 {
		p["blocks"] = m.Blocks
	}
	if data, err := json.Marshal(p); err != nil || len(data) > maxAckBytes {
		p = map[string]any{"response_type": "ephemeral", "text": render.Truncate(m.Text, 4000)}
	}
	return p
}

// runCommand does a command's work after the ack, off the socket loop.
func (b *Bot) runCommand(cmd slack.SlashCommand) {
	verb, arg := parseCommand(cmd.Text)
	log := b.log.With("channel", cmd.ChannelID, "user", cmd.UserID, "command", verb)
	switch verb {
	case verbStatus:
		b.postChannelStatus(cmd.ChannelID, cmd.UserID, "", cmd.ResponseURL)
	case verbRepo:
		b.runRepoCommand(cmd, arg, log)
	case verbInstructions:
		b.runInstructionsCommand(cmd, arg, log)
	case verbRepos:
		b.runForget(cmd, arg, log)
	case verbAutomations:
		b.runAutomationsCommand(cmd, arg, log) // automations_commands.go
	case verbPlan, verbRun:
		mode := planning.PlanModePlan
		if verb == verbRun {
			mode = planning.PlanModeDefault
		}
		opts, task, _ := splitOptions(arg) // the ack refused what does not parse
		repo, err := b.resolveRepo(opts, cmd.ChannelID, task)
		if err != nil {
			b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text("h9 did not start a session: "+err.Error()+"."))
			return
		}
		d := startData{Team: b.sessionTeam(), Owner: cmd.UserID, Task: task, Mode: mode, Repo: repo}
		st, err := b.recordStart(cmd.ChannelID, d)
		if err != nil {
			log.Error("recording a new session's start", "err", err)
			b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text(cannotSaveText))
			return
		}
		ts, err := b.api.PostMessage(b.bg, log, cmd.ChannelID, "", render.WithStart(rootMessage(d), st.ID))
		if err != nil {
			b.forgetStart(log, st.ID) // Slack said no: no thread began
			b.api.Respond(b.bg, log, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text(postFailureHint(err)))
			return
		}
		b.reg.deliver(threadKey{channel: cmd.ChannelID, ts: ts}, d.create(st.ID))
	}
}

// postFailureHint tells a user what to do when h9 cannot post.
func postFailureHint(err error) string {
	switch slackapi.ErrorCode(err) {
	case "not_in_channel", "channel_not_found":
		return "h9 cannot post in this channel. Invite it first: `/invite @h9`."
	case "is_archived":
		return "This channel is archived; h9 cannot start a session here."
	}
	return "h9 could not start the session (Slack said: " + render.Escape(render.Truncate(err.Error(), 200)) + "). Try again in a moment."
}

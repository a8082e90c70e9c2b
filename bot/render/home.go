package render

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// Home tab caps: Slack allows 100 blocks in a view; h9 uses a handful.
const (
	MaxHomeBlocks = 100
	homeSections  = 6
)

const homeAbout = "*h9 runs a coding agent per Slack thread.* Each session gets its own workspace, " +
	"a live checklist of the agent's plan and buttons to approve, steer or stop it."

const homeStart = "*How to start*\n" +
	"• `/h9 plan &lt;task&gt;` in a channel: h9 explores read-only, writes a plan and asks you to review it.\n" +
	"• `/h9 run &lt;task&gt;`: skip planning and start working.\n" +
	"• `@h9 &lt;task&gt;` in a channel: a planning session in that message's thread.\n" +
	"• `/h9 status`: a channel's sessions; `/h9 help`: all commands.\n" +
	"Reply in a session's thread to revise the plan, give the next step or follow up."

// HomeRow is one of the user's sessions on the Home tab.
type HomeRow struct {
	StatusRow
	Channel string // channel id, shown as a channel link when it is a plain id
}

// RenderHome is the App Home tab for one user: what h9 is, how to start,
// the tokens all their sessions used (total), and their recent sessions
// (most recent first) with task, state, `x/y tasks`, tokens and a link.
// Only Blocks matter for a view.
func RenderHome(rows []HomeRow, total Spend) []slack.Block {
	bs := blocks(
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "h9", false, false), slack.HeaderBlockOptionBlockID("h9_home_title")),
		section("h9_home_about", homeAbout),
		section("h9_home_start", homeStart),
		slack.NewDividerBlock(),
	)
	if len(rows) == 0 {
		return append(bs, section("h9_home_sessions_0", "*Your recent sessions*\nNone yet. Start one with `/h9 plan &lt;task&gt;` in a channel."))
	}
	all := make([]string, len(rows))
	for i, r := range rows {
		all[i] = statusLine(r.StatusRow)
		if ch := channelLink(r.Channel); ch != "" {
			all[i] += " · in " + ch
		}
	}
	shown := fitLines(all, packCapacity(homeSections, maxStatusLine+40))
	head := "*Your recent sessions* (" + strconv.Itoa(len(rows)) + ")"
	if t := total.String(); t != "" {
		head += "\nYour sessions have used " + t + " in all."
	}
	lines := append([]string{head}, shown...)
	bs = append(bs, packLines("h9_home_sessions", lines)...)
	if hidden := len(rows) - len(shown); hidden > 0 {
		bs = append(bs, contextLine("h9_home_more", "…and "+strconv.Itoa(hidden)+" more"))
	}
	return bs
}

// channelLink is <#C…> for a plain channel id, "" for anything else.
func channelLink(id string) string {
	if id == "" || len(id) > 20 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" ||
		!strings.ContainsRune("CG", rune(id[0])) {
		return ""
	}
	return "<#" + id + ">"
}

package render

import (
	"strings"

	"github.com/slack-go/slack"
)

// maxShownInstructions bounds the instructions a section quotes: the
// section limit (3000) with room for the words around them.
const maxShownInstructions = 2800

// RenderInstructions answers `/h9 instructions`: the channel's
// instructions, quoted, or that there are none.
func RenderInstructions(channel, instructions string) Message {
	where := "this channel"
	if ch := channelLink(channel); ch != "" {
		where = ch
	}
	if instructions == "" {
		s := "There are no instructions for " + where + ". `/h9 instructions set <text>` adds some: every new session here gets them after AGENTS.md."
		return Message{Text: s, Blocks: blocks(section("h9_instructions", Escape(s)))}
	}
	head := "*Instructions for " + where + "* (every new session here gets them after AGENTS.md):"
	return Message{Text: "Instructions for this channel: " + Truncate(instructions, 3000),
		Blocks: blocks(section("h9_instructions", head+"\n"+quote(instructions, maxShownInstructions)))}
}

// quote is text as a Slack block quote, escaped and cut to max.
func quote(s string, max int) string {
	lines := strings.Split(Truncate(strings.TrimSpace(s), max), "\n")
	for i, l := range lines {
		lines[i] = "&gt; " + Escape(l)
	}
	return strings.Join(lines, "\n")
}

// ChannelInstructions is one channel's instructions, for the Home tab.
type ChannelInstructions struct {
	Channel, Text string
}

// maxHomeInstructions bounds the channels whose instructions the Home tab
// shows, and homeInstructionsChars each one's quote.
const (
	maxHomeInstructions   = 5
	homeInstructionsChars = 500
)

// WithInstructions adds, under the Home tab's sessions, the instructions
// of the channels those sessions are in (channels without any are left
// out).
func WithInstructions(bs []slack.Block, ins []ChannelInstructions) []slack.Block {
	n := 0
	for _, ci := range ins {
		if ci.Text == "" || n == maxHomeInstructions || len(bs) >= MaxHomeBlocks-1 {
			continue
		}
		where := channelLink(ci.Channel)
		if where == "" {
			where = Escape(Truncate(ci.Channel, 40))
		}
		bs = append(bs, section("h9_home_instructions_"+ci.Channel, "*Instructions for "+where+"*\n"+quote(ci.Text, homeInstructionsChars)))
		n++
	}
	return bs
}

package render

import (
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

// quoteChunk bounds one section of quoted instructions: the section
// limit (3000) with room for the heading the first one carries.
const quoteChunk = 2800

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
	// Shown whole (they are at most 4,000 characters, which escaped may
	// need several sections), never cut.
	head := "*Instructions for " + where + "* (every new session here gets them after AGENTS.md):"
	var bs []slack.Block
	for i, part := range quoteSections(instructions, quoteChunk) {
		id := "h9_instructions"
		if i == 0 {
			part = head + "\n" + part
		} else {
			id += "_" + strconv.Itoa(i+1)
		}
		bs = append(bs, section(id, part))
	}
	return Message{Text: "Instructions for this channel: " + Truncate(instructions, 38000), Blocks: bs}
}

// quoteSections is s as a Slack block quote, escaped, in pieces of at
// most max characters each, split between lines (or inside a line longer
// than a piece).
func quoteSections(s string, max int) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		for _, piece := range quotedPieces(line, max) {
			if cur.Len() > 0 && Len(cur.String())+1+Len(piece) > max {
				flush()
			}
			if cur.Len() > 0 {
				cur.WriteString("\n")
			}
			cur.WriteString(piece)
		}
	}
	flush()
	return out
}

// quotedPieces is one line quoted and escaped, split where it would not
// fit max on its own.
func quotedPieces(line string, max int) []string {
	var out []string
	piece := "&gt; "
	for _, r := range line {
		e := Escape(string(r))
		if Len(piece)+Len(e) > max {
			out = append(out, piece)
			piece = "&gt; "
		}
		piece += e
	}
	return append(out, piece)
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

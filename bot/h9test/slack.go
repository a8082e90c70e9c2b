package h9test

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
	"github.com/slack-go/slack"
)

// Slash runs the slash command "/h9 text" as user in channel.
func (f *Fakes) Slash(user, channel, text string) fakeslack.Ack {
	f.TB.Helper()
	ack, err := f.Slack.SlashCommand(f.Ctx, fakeslack.SlashCommand{Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		f.TB.Fatal(err)
	}
	return ack
}

// StartThread runs "/h9 text" as user in the channel and returns the root
// ts of the thread it opens.
func (f *Fakes) StartThread(user, text string) string {
	f.TB.Helper()
	before := len(f.Roots())
	f.Slash(user, f.Channel, text)
	var root string
	f.WaitFor("the root message of "+text, func() bool {
		if rs := f.Roots(); len(rs) > before {
			root = rs[len(rs)-1].TS
			return true
		}
		return false
	})
	return root
}

// Roots are the bot's top-level messages in the channel.
func (f *Fakes) Roots() []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range f.Slack.Messages(f.Channel) {
		if m.ThreadTS == "" && m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// BotMessages are the bot's replies in thread whose text or blocks carry marker.
func (f *Fakes) BotMessages(thread, marker string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range f.Slack.Thread(f.Channel, thread) {
		if m.Streamed && m.Updates == 0 {
			continue // a run's text streaming, not yet the post it becomes
		}
		if m.BotID != "" && m.TS != thread && (strings.Contains(string(m.Blocks), marker) || strings.Contains(m.Text, marker)) {
			out = append(out, m)
		}
	}
	return out
}

// WaitMessage waits for the n-th (1-based) bot reply in thread carrying marker.
func (f *Fakes) WaitMessage(thread, marker string, n int) fakeslack.Message {
	f.TB.Helper()
	var m fakeslack.Message
	f.WaitFor("message #"+itoa(n)+" with "+marker, func() bool {
		ms := f.BotMessages(thread, marker)
		if len(ms) >= n {
			m = ms[n-1]
			return true
		}
		return false
	})
	return m
}

// checklistMarker is the block id of the checklist's title.
const checklistMarker = "h9_cl_title"

// Checklist returns the thread's one checklist message.
func (f *Fakes) Checklist(thread string) fakeslack.Message {
	f.TB.Helper()
	ms := f.BotMessages(thread, checklistMarker)
	if len(ms) != 1 {
		f.TB.Fatalf("thread %s has %d checklist messages, want 1", thread, len(ms))
	}
	return ms[0]
}

// WaitChecklist waits until the thread's one checklist shows every part.
func (f *Fakes) WaitChecklist(thread string, parts ...string) fakeslack.Message {
	f.TB.Helper()
	var m fakeslack.Message
	f.WaitFor("checklist showing "+strings.Join(parts, ", "), func() bool {
		ms := f.BotMessages(thread, checklistMarker)
		if len(ms) != 1 {
			return false
		}
		m = ms[0]
		return showsAll(m, parts)
	})
	return m
}

// WaitEphemeral waits for an ephemeral to user in channel showing every part.
func (f *Fakes) WaitEphemeral(channel, user string, parts ...string) fakeslack.Message {
	f.TB.Helper()
	var found fakeslack.Message
	f.WaitFor("ephemeral to "+user+": "+strings.Join(parts, ", "), func() bool {
		for _, m := range f.Slack.Ephemerals(channel, user) {
			if showsAll(m, parts) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// showsAll is whether each part is in the message's text or its blocks.
func showsAll(m fakeslack.Message, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(m.Text, p) && !strings.Contains(string(m.Blocks), p) {
			return false
		}
	}
	return true
}

// Click clicks the button action on the message ts in the channel as user.
func (f *Fakes) Click(user, ts, action string) {
	f.TB.Helper()
	if _, err := f.Slack.ClickButton(f.Ctx, user, f.Channel, ts, action); err != nil {
		f.TB.Fatal(err)
	}
}

// Reply posts text as user in thread (a new top-level message when thread
// is empty) and returns its ts.
func (f *Fakes) Reply(user, thread, text string) string {
	f.TB.Helper()
	ts, err := f.Slack.PostUserMessage(f.Ctx, user, f.Channel, thread, text)
	if err != nil {
		f.TB.Fatal(err)
	}
	return ts
}

func itoa(n int) string { return strconv.Itoa(n) }

// CheckPayloads checks every message the bot sent against Slack's limits,
// through the fake's checker and render.CheckLimits.
func (f *Fakes) CheckPayloads() {
	t := f.TB
	t.Helper()
	for _, v := range f.Slack.Violations() {
		t.Errorf("fakeslack violation: %s", v)
	}
	for _, method := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral"} {
		for _, c := range f.Slack.Calls(method) {
			m := render.Message{Text: c.Params["text"]}
			if raw := c.Params["blocks"]; raw != "" {
				var bs slack.Blocks
				if err := json.Unmarshal([]byte(raw), &bs); err != nil {
					t.Errorf("%s: blocks do not decode: %v", method, err)
					continue
				}
				m.Blocks = bs.BlockSet
			}
			if err := render.CheckLimits(m); err != nil {
				t.Errorf("%s payload breaks a limit: %v", method, err)
			}
		}
	}
}

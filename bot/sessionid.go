package bot

import "strings"

// newSessionID makes the id of a session started in a thread:
// "team/channel/threadTS". It is the session's key for the store, the
// agent and its workspace, and the value its buttons carry. Once made it
// is opaque: the bot finds a thread's session by channel and thread, so a
// session made while auth.test could not tell the team is still reached
// after a start that can (and the other way round).
func newSessionID(team, channel, threadTS string) string {
	return team + "/" + channel + "/" + threadTS
}

// ParseSessionID splits an id newSessionID made. This file is the one
// owner of the format: cmd/h9 uses it to tag the agent's log lines, which
// carry only the id, with their channel and thread.
func ParseSessionID(id string) (team, channel, thread string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// threadKey names the thread a session lives in: what the bot routes by.
type threadKey struct{ channel, ts string }

// String names the thread: "channel/ts".
func (k threadKey) String() string { return k.channel + "/" + k.ts }

// threadOf is the thread of a session id, for a button's value.
func threadOf(id string) (threadKey, bool) {
	_, channel, thread, ok := ParseSessionID(id)
	return threadKey{channel: channel, ts: thread}, ok
}

package bot

import "slices"

// permissions answers who may use h9 where. Empty allow-lists mean everyone.
type permissions struct {
	users    map[string]bool
	channels map[string]bool
	admins   map[string]bool
}

func newPermissions(users, channels, admins []string) permissions {
	return permissions{users: set(users), channels: set(channels), admins: set(admins)}
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		if id != "" {
			m[id] = true
		}
	}
	return m
}

// userAllowed: may this user talk to h9 at all?
func (p permissions) userAllowed(user string) bool {
	return len(p.users) == 0 || p.users[user] || p.admins[user]
}

// channelAllowed: does h9 work in this channel?
func (p permissions) channelAllowed(channel string) bool {
	return len(p.channels) == 0 || p.channels[channel]
}

// canControl: may user press the review, approval and stop buttons of rec?
func (p permissions) canControl(rec *Session, user string) bool {
	return user != "" && (user == rec.Owner || p.admins[user])
}

// refusal is the ephemeral text for a user or channel h9 does not serve.
func (p permissions) refusal(user, channel string) string {
	if !p.channelAllowed(channel) {
		return "h9 is not enabled in this channel. Ask an admin to add it to H9_ALLOWED_CHANNELS."
	}
	if !p.userAllowed(user) {
		return "You are not on h9's list of allowed users. Ask an admin to add you to H9_ALLOWED_USERS."
	}
	return ""
}

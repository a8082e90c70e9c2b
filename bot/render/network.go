package render

import "github.com/slack-go/slack"

// The buttons of a refused host's message (ARCHITECTURE.md, "Network for
// the agent"). They carry the host:port in ButtonValue.StepID.
const (
	ActionNetAllowSession = "h9_net_allow_session"
	ActionNetAllowRepo    = "h9_net_allow_repo"
	ActionNetDeny         = "h9_net_deny"

	LabelNetAllowSession = "Allow for this session"
	LabelNetDeny         = "Deny"

	BlockNetworkActions = "h9_network_actions"
)

// LabelNetAllowRepo is the label of the button that allows a host for the
// repository repo.
func LabelNetAllowRepo(repo string) string { return Truncate("Allow for "+repo, MaxButtonText) }

// IsNetworkAction reports whether id is one of a refused host's buttons.
func IsNetworkAction(id string) bool {
	return id == ActionNetAllowSession || id == ActionNetAllowRepo || id == ActionNetDeny
}

// maxCommandShown bounds the command quoted in a refused host's message.
const maxCommandShown = 120

// RenderNetworkAsk tells the thread that command tried to reach hostPort,
// which the session's allow list refused; repo "" offers no repository
// button (a session without one).
func RenderNetworkAsk(sessionID, command, hostPort, repo string) Message {
	v := ButtonValue{SessionID: sessionID, StepID: hostPort}
	said := networkAskText(command, hostPort)
	btns := []*slack.ButtonBlockElement{button(ActionNetAllowSession, LabelNetAllowSession, v, slack.StylePrimary)}
	if repo != "" {
		btns = append(btns, button(ActionNetAllowRepo, LabelNetAllowRepo(repo), v, ""))
	}
	btns = append(btns, button(ActionNetDeny, LabelNetDeny, v, slack.StyleDanger))
	return Message{
		Text: said,
		Blocks: blocks(
			section("h9_network_ask", ":no_entry: "+said+"."),
			actions(BlockNetworkActions, btns...),
		),
	}
}

func networkAskText(command, hostPort string) string {
	return inlineCode(command, maxCommandShown) + " tried to reach " + inlineCode(hostPort, 300) + ", which is not allowed"
}

// RenderNetworkDecided replaces a refused host's message once user chose:
// allowed for the session, for repo (when repo is not ""), or denied.
func RenderNetworkDecided(user, command, hostPort, repo string, allowed bool) Message {
	var s string
	switch {
	case !allowed:
		s = "Denied by " + mention(user) + ": " + inlineCode(hostPort, 300) + " stays blocked."
	case repo != "":
		s = "Allowed by " + mention(user) + " for " + safeLine(repo, 200) + ": " + inlineCode(hostPort, 300) + " is on the repository's allow list from the next command on."
	default:
		s = "Allowed by " + mention(user) + " for this session: " + inlineCode(hostPort, 300) + " is reachable from the next command on."
	}
	said := networkAskText(command, hostPort) + ". " + s
	return Message{Text: said, Blocks: blocks(section("h9_network_decided", ":globe_with_meridians: "+said))}
}

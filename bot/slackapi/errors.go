package slackapi

import "errors"

var (
	// errMessageLimits: a message h9 was about to send breaks Slack's
	// limits (render.CheckLimits), so it was not sent.
	errMessageLimits = errors.New("message breaks Slack's limits")
	// errLeaseLost: a Slack call for a session whose lease this replica no
	// longer holds was not sent.
	errLeaseLost = errors.New("the session's lease is no longer this replica's")
)

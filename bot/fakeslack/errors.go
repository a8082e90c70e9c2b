package fakeslack

import "errors"

var (
	// ErrClosed is returned by driving methods once the server is closed.
	ErrClosed = errors.New("fakeslack: server closed")
	// ErrUnknownEnvelope is returned by Redeliver for an envelope never sent.
	ErrUnknownEnvelope = errors.New("fakeslack: unknown envelope")
	// ErrMessageNotFound is returned when a driving method needs a stored message that does not exist.
	ErrMessageNotFound = errors.New("fakeslack: message not found")
	// ErrButtonNotFound is returned by ClickButton when no button has the action_id.
	ErrButtonNotFound = errors.New("fakeslack: button not found")
	// ErrNoStopButton is returned by PressStop when the thread's agent
	// session is not processing, so Slack shows no Stop button.
	ErrNoStopButton = errors.New("fakeslack: no Stop button: the agent session is not processing")
)

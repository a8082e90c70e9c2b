package render

import "github.com/h9-app/h9/planning"

// State is what a session is doing, as shown on the checklist and in /h9 status.
type State string

const (
	StatePlanning         State = "planning"
	StateAwaitingReview   State = "awaiting review"
	StateRunning          State = "running"
	StateStalled          State = "stalled"
	StateDone             State = "done"
	StateCancelled        State = "cancelled"
	StateError            State = "error"
	StateIdle             State = "idle"
	StateAwaitingApproval State = "awaiting approval"
	StateInterrupted      State = "interrupted"
)

// label is the state as shown; an unset state reads as idle. A state is
// the bot's own word, but it is escaped and capped all the same.
func (s State) label() string {
	if l := safeLine(string(s), 40); l != "" {
		return l
	}
	return string(StateIdle)
}

// ModeLabel names a plan mode the way users see it on Slack.
func ModeLabel(m planning.PlanMode) string {
	switch m {
	case planning.PlanModePlan:
		return "planning"
	case planning.PlanModeAutoEdit:
		return "confirm-each-step"
	default:
		return "executing"
	}
}

// The seed's todo icons.
const (
	IconCompleted  = "✔"
	IconInProgress = "▶"
	IconPending    = "○"
	IconCancelled  = "⊘"
	iconUnknown    = "•"
)

// Icon returns the seed's icon for a todo status.
func Icon(s planning.TodoStatus) string {
	switch s {
	case planning.TodoCompleted:
		return IconCompleted
	case planning.TodoInProgress:
		return IconInProgress
	case planning.TodoPending:
		return IconPending
	case planning.TodoCancelled:
		return IconCancelled
	}
	return iconUnknown
}

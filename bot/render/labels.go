package render

import "github.com/h9-app/h9/planning"

// stateLabel is a session's state as shown (the bot's word for it), escaped
// and capped all the same; "idle" when there is none.
func stateLabel(s string) string {
	if l := safeLine(s, 40); l != "" {
		return l
	}
	return "idle"
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

// The Planning module's todo icons.
const (
	IconCompleted  = "✔"
	IconInProgress = "▶"
	IconPending    = "○"
	IconCancelled  = "⊘"
	iconUnknown    = "•"
)

// Icon returns the Planning module's icon for a todo status.
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

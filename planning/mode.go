// Package planning holds the Planning module of h9: the plan mode, the todo
// list the model maintains with todo_write, and the rules that keep that list
// honest. It is pure data and rules: no I/O, no logging.
package planning

import "fmt"

// PlanMode selects what the agent may do during a run. It is an enum rather
// than a bool so that more modes can be added without changing callers.
type PlanMode int

const (
	// PlanModeDefault gives the agent every tool.
	PlanModeDefault PlanMode = iota
	// PlanModePlan is read-only: the agent explores and writes a todo plan.
	PlanModePlan
	// PlanModeAutoEdit runs with every tool, but each mutating call is
	// confirmed by the user first ("Approve & confirm each step").
	PlanModeAutoEdit

	modeCount = 3
)

// Next cycles Default → Plan → AutoEdit → Default.
func (m PlanMode) Next() PlanMode { return (m + 1) % modeCount }

// Valid reports whether m is one of the defined modes.
func (m PlanMode) Valid() bool { return m >= 0 && m < modeCount }

func (m PlanMode) String() string {
	switch m {
	case PlanModeDefault:
		return "default"
	case PlanModePlan:
		return "plan"
	case PlanModeAutoEdit:
		return "auto-edit"
	}
	return fmt.Sprintf("PlanMode(%d)", int(m))
}

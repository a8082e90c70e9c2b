package planning

// MaxEvidenceCalls is how many tool calls one todo's evidence keeps: the
// latest, which say most about how it ended. Older calls are only counted,
// so a todo worked on for hours stays a few hundred bytes.
const MaxEvidenceCalls = 4

// Evidence is what h9 saw done for one todo, never what the model wrote
// about it: the tool calls made for it and, with a repository, the commit
// that checkpointed its changes. It is kept apart from TodoItem, whose JSON
// is what todo_write accepts, so the model cannot write it.
type Evidence struct {
	// Calls are the latest calls, oldest first (at most MaxEvidenceCalls).
	Calls []ToolRun `json:"calls,omitempty"`
	// Made counts every call recorded, Succeeded those that succeeded.
	Made      int `json:"made,omitempty"`
	Succeeded int `json:"ok,omitempty"`
	// Checkpoint is the commit that recorded the todo's changes; nil
	// without a repository or when nothing changed.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// ToolRun is one tool call as h9 observed it.
type ToolRun struct {
	Tool   string `json:"tool"`
	Target string `json:"target,omitempty"` // what it acted on: a path, a command (shortened)
	Failed bool   `json:"failed,omitempty"` // its result was an error
	Exit   *int   `json:"exit,omitempty"`   // a command's exit code
}

// Checkpoint is a commit that recorded a todo's changes in the session's
// repository.
type Checkpoint struct {
	Commit  string `json:"commit"`  // short commit id
	Added   int    `json:"added"`   // lines added
	Deleted int    `json:"deleted"` // lines deleted
}

// Worked reports whether at least one recorded call succeeded: the work
// rule's test.
func (e *Evidence) Worked() bool { return e != nil && e.Succeeded > 0 }

// add records one call, keeping only the latest MaxEvidenceCalls.
func (e *Evidence) add(run ToolRun) {
	e.Made++
	if !run.Failed {
		e.Succeeded++
	}
	if len(e.Calls) < MaxEvidenceCalls {
		e.Calls = append(e.Calls, run)
		return
	}
	copy(e.Calls, e.Calls[1:])
	e.Calls[len(e.Calls)-1] = run
}

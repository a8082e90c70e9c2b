package agent

import (
	"fmt"

	"github.com/h9-app/h9/planning"
)

// EventKind says what happened in a run.
type EventKind int

const (
	// EventRunStarted: first event of every run; Mode is the snapshotted mode.
	EventRunStarted EventKind = iota
	// EventText: interim assistant text that came with tool calls. The
	// final answer is not repeated here; it is EventDone.Text.
	EventText
	// EventToolStarted: a tool call begins; Tool and Summary are set.
	EventToolStarted
	// EventToolFinished: a tool call ended; Tool, IsError and Output are set.
	EventToolFinished
	// EventTodos: a todo_write was accepted; Todos is the full snapshot,
	// Evidence the completed todos' evidence.
	EventTodos
	// EventUsage: a model request was counted; Usage is the run's tokens
	// so far, Total the session's.
	EventUsage
	// EventCompacted: older messages were replaced by a summary; Text is a note.
	EventCompacted
	// EventCompactFailed: compaction failed; the history is unchanged and
	// the run goes on. Text says why, Err is the cause.
	EventCompactFailed
	// EventDone: last event of a successful run; Text is the final answer.
	EventDone
	// EventError: last event of a failed run; Text is for users, Err for logs.
	EventError
	// EventImagesRefused: the endpoint refused image parts; the request
	// went again without them, and no image is sent for the life of the
	// process. Text says so, for the thread.
	EventImagesRefused
)

func (k EventKind) String() string {
	switch k {
	case EventRunStarted:
		return "run_started"
	case EventText:
		return "text"
	case EventToolStarted:
		return "tool_started"
	case EventToolFinished:
		return "tool_finished"
	case EventTodos:
		return "todos"
	case EventUsage:
		return "usage"
	case EventCompacted:
		return "compacted"
	case EventCompactFailed:
		return "compact_failed"
	case EventDone:
		return "done"
	case EventError:
		return "error"
	case EventImagesRefused:
		return "images_refused"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing that happened during a run, in terms the bot can
// render without knowing the model API.
type Event struct {
	Kind      EventKind
	SessionID string
	Mode      planning.PlanMode   // RunStarted
	Text      string              // Text, Done (final text), Error (user-facing words), Compacted/CompactFailed (note)
	Tool      string              // ToolStarted/Finished
	Summary   string              // ToolStarted: short argument summary, e.g. "go test ./..." or "main.go"
	IsError   bool                // ToolFinished
	Output    string              // ToolFinished: short output
	Todos     []planning.TodoItem // Todos: full snapshot after every accepted todo_write
	// Evidence (Todos) is what h9 saw done for each completed todo, by id;
	// shared with the run: read it, never change it.
	Evidence map[string]planning.Evidence
	Usage    Usage // Usage, Done, Error: tokens used by this run
	Total    Usage // RunStarted, Usage, Done, Error: the session's tokens over all its runs
	Err      error // Error, CompactFailed
}

// eventOutputLimit bounds Event.Output and Event.Summary: they are for a
// status line, the model gets the full (capped) result.
const eventOutputLimit = 300

// short trims s for an event field, on a rune boundary.
func short(s string) string { return shortTo(s, eventOutputLimit) }

// shortTo trims s to at most limit runes, the last one "…" when cut.
func shortTo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}

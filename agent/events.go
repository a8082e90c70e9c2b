package agent

import (
	"fmt"
	"strings"

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
	// EventTextDelta: the model wrote more of answer number Answer (1 for
	// the run's first model answer, counting every step's): Text is the new
	// piece, to be appended to the pieces of the same Answer heard since
	// its last EventTextRetracted. They come as the model streams, before
	// the answer is complete; a plain (not streamed) answer's text comes as
	// one piece. Once the answer is complete, its pieces concatenated are
	// exactly its text: EventText.Text for an answer with tool calls, the
	// run's final text (EventDone.Text, Result.Text) for the last one.
	// Thinking, tool calls and their arguments are not text. Events are
	// emitted on the run's goroutine while it reads the model's answer:
	// the handler must be quick (coalesce, do not call Slack there).
	EventTextDelta
	// EventTextRetracted: the text of answer Answer heard so far is void
	// (its stream broke and the request is tried again, or the answer was
	// refused or replaced); the pieces that follow start it again.
	EventTextRetracted
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
	case EventTextDelta:
		return "text_delta"
	case EventTextRetracted:
		return "text_retracted"
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
	Mode      planning.PlanMode // RunStarted
	Text      string            // Text, TextDelta (the new piece), Done (final text), Error (user-facing words), Compacted/CompactFailed (note)
	// Answer is the number of the model answer in the run (1 for the
	// first) that TextDelta, TextRetracted, Text and Done speak of.
	Answer  int
	Tool    string              // ToolStarted/Finished
	Summary string              // ToolStarted: short argument summary, e.g. "go test ./..." or "main.go"
	IsError bool                // ToolFinished
	Output  string              // ToolFinished: short output
	Todos   []planning.TodoItem // Todos: full snapshot after every accepted todo_write
	// Evidence (Todos) is what h9 saw done for each completed todo, by id;
	// shared with the run: read it, never change it.
	Evidence map[string]planning.Evidence
	Usage    Usage // Usage, Done, Error: tokens used by this run
	Total    Usage // RunStarted, Usage, Done, Error: the session's tokens over all its runs
	Err      error // Error, CompactFailed
}

// answerText follows the text of the run's current model answer as
// EventTextDelta gave it out, so that what was given out can be made to
// match the answer once it is complete (settle).
type answerText struct {
	number int             // the answer's number in the run, 1 for the first
	given  strings.Builder // its pieces given out since the last retraction
}

// nextAnswer starts answer number n+1: its text is empty.
func (r *run) nextAnswer() {
	r.text.number++
	r.text.given.Reset()
}

// onText gives out one piece of the current answer's text (Request.OnText).
func (r *run) onText(piece string) {
	if piece == "" {
		return
	}
	r.text.given.WriteString(piece)
	r.emit(Event{Kind: EventTextDelta, Text: piece, Answer: r.text.number})
}

// onRetract voids the current answer's text given out so far
// (Request.OnRetract); nothing is emitted when none was.
func (r *run) onRetract() {
	if r.text.given.Len() == 0 {
		return
	}
	r.text.given.Reset()
	r.emit(Event{Kind: EventTextRetracted, Answer: r.text.number})
}

// settle makes the pieces given out for the current answer equal text,
// the answer's text as the run reports it: the missing end as one more
// piece (all of it for a model that streamed nothing), or, when what was
// given out is not its beginning (a refusal, marked), a retraction and the
// whole text.
func (r *run) settle(text string) {
	given := r.text.given.String()
	if given == text {
		return
	}
	if !strings.HasPrefix(text, given) {
		r.onRetract()
		given = ""
	}
	r.onText(text[len(given):])
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

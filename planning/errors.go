package planning

import "errors"

// Errors returned by CheckWrite and WorkLog.Check. Each is wrapped with a message the model can
// act on; match with errors.Is.
var (
	// ErrBatchCompletion: more than MaxDirectCompletions items became
	// completed without having been in_progress. This is the "hallucinated
	// execution" pattern the rule exists to stop.
	ErrBatchCompletion = errors.New("too many todos completed at once")
	// ErrNoWork: a todo would become completed with no successful tool
	// call (other than todo_write) behind it; see WorkLog.
	ErrNoWork = errors.New("todo completed without work")
	// ErrCancelledCompleted: a cancelled item was marked completed directly.
	ErrCancelledCompleted = errors.New("cancelled todo cannot become completed")
	// ErrEmptyID: an item has no id.
	ErrEmptyID = errors.New("todo without id")
	// ErrDuplicateID: two items share an id.
	ErrDuplicateID = errors.New("duplicate todo id")
	// ErrEmptyContent: an item has no content.
	ErrEmptyContent = errors.New("todo without content")
	// ErrUnknownStatus: an item's status is not one of the four statuses.
	ErrUnknownStatus = errors.New("unknown todo status")
	// ErrTooManyTodos: the list is longer than MaxTodos.
	ErrTooManyTodos = errors.New("too many todos")
)

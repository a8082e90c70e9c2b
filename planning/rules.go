package planning

import (
	"errors"
	"fmt"
	"strings"
)

// MaxDirectCompletions is how many items one todo_write call may move to
// completed without their having been in_progress before the call.
//
// Not 0: during a continuation the agent often does one real piece of work
// (a bash run, a file write) and marks that item completed straight from
// pending. Forbidding that would bounce honest calls and derail execution.
// Not more: the bug this rule exists for was a model marking 9 of 11 items
// completed in one call with no work behind them.
const MaxDirectCompletions = 1

// MaxTodos bounds one list so a runaway model cannot bloat the session.
const MaxTodos = 500

// CheckWrite applies the todo_write rules to a proposed full replacement of
// prev. It returns the list to store, or an error whose text tells the model
// how to fix the call. The whole list is checked before anything is
// accepted, so a refused call changes nothing.
func CheckWrite(prev, next []TodoItem) ([]TodoItem, error) { return checkWrite(statuses(prev), next) }

// checkWrite is CheckWrite against the previous list's statuses by id.
func checkWrite(prior map[string]TodoStatus, next []TodoItem) ([]TodoItem, error) {
	if len(next) > MaxTodos {
		return nil, fmt.Errorf("%w: %d items, at most %d are allowed; merge or drop items", ErrTooManyTodos, len(next), MaxTodos)
	}
	if err := checkItems(next); err != nil {
		return nil, err
	}
	if err := checkTransitions(prior, next); err != nil {
		return nil, err
	}
	return cloneItems(next), nil
}

// checkItems validates each item on its own and the ids as a set.
func checkItems(items []TodoItem) error {
	seen := make(map[string]int, len(items))
	for i, item := range items {
		pos := i + 1
		if strings.TrimSpace(item.ID) == "" {
			return fmt.Errorf("%w: item %d has an empty id; give every todo a short unique id", ErrEmptyID, pos)
		}
		if first, dup := seen[item.ID]; dup {
			return fmt.Errorf("%w: items %d and %d both use id %q; ids must be unique", ErrDuplicateID, first, pos, item.ID)
		}
		seen[item.ID] = pos
		if strings.TrimSpace(item.Content) == "" {
			return fmt.Errorf("%w: todo %q has empty content; describe the concrete action", ErrEmptyContent, item.ID)
		}
		if !item.Status.Valid() {
			return fmt.Errorf("%w: todo %q has status %q; use pending, in_progress, completed or cancelled", ErrUnknownStatus, item.ID, item.Status)
		}
	}
	return nil
}

// checkTransitions enforces the state machine against the previous list:
// cancelled → completed is refused, and at most MaxDirectCompletions items
// may reach completed without having been in_progress.
func checkTransitions(prior map[string]TodoStatus, next []TodoItem) error {
	var direct []string
	for _, item := range next {
		if item.Status != TodoCompleted {
			continue
		}
		before, existed := prior[item.ID]
		switch {
		case !existed || before == TodoPending:
			direct = append(direct, item.ID)
		case before == TodoCancelled:
			return fmt.Errorf("%w: todo %q was cancelled; to do it after all, set it back to pending or in_progress first, do the work, then mark it completed", ErrCancelledCompleted, item.ID)
		}
		// in_progress → completed and completed → completed are always fine.
	}
	if len(direct) > MaxDirectCompletions {
		return fmt.Errorf("%w: %d todos (%s) would jump to completed without having been in_progress, and at most %d may per call. "+
			"Nothing was saved. Work through the items one at a time: mark one in_progress, do its real work with tools, then mark it completed",
			ErrBatchCompletion, len(direct), quoteList(direct, 5), MaxDirectCompletions)
	}
	return nil
}

// quoteList renders up to max ids for an error message.
func quoteList(ids []string, max int) string {
	shown := ids
	if len(shown) > max {
		shown = shown[:max]
	}
	quoted := make([]string, len(shown))
	for i, id := range shown {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	s := strings.Join(quoted, ", ")
	if len(ids) > max {
		s += fmt.Sprintf(" and %d more", len(ids)-max)
	}
	return s
}

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

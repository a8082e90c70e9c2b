package planning

import (
	"fmt"
	"slices"
	"strings"
)

// TodoStatus is the state of one todo item.
//
//	pending ──► in_progress ──► completed
//	   │              │
//	   └──► cancelled └──► cancelled
//
// The store does not enforce transitions; CheckWrite does, at the tool layer.
type TodoStatus string

const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
	TodoCancelled  TodoStatus = "cancelled"
)

// Valid reports whether s is one of the four known statuses.
func (s TodoStatus) Valid() bool {
	switch s {
	case TodoPending, TodoInProgress, TodoCompleted, TodoCancelled:
		return true
	}
	return false
}

// Active reports whether work on the item remains (pending or in_progress).
func (s TodoStatus) Active() bool { return s == TodoPending || s == TodoInProgress }

// TodoItem is one entry of the plan.
type TodoItem struct {
	ID      string     `json:"id"`
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
}

// FormatForInjection renders the active items for a compaction summary:
// "[ ] content" for pending, "[>] content" for in_progress, one per line.
// It returns "" when nothing is active.
func FormatForInjection(items []TodoItem) string {
	var b strings.Builder
	for _, item := range items {
		var prefix string
		switch item.Status {
		case TodoPending:
			prefix = "[ ] "
		case TodoInProgress:
			prefix = "[>] "
		default:
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix)
		b.WriteString(item.Content)
	}
	return b.String()
}

// cloneItems copies a list so that no caller ever aliases another's slice.
// A nil or empty input stays nil.
func cloneItems(items []TodoItem) []TodoItem {
	if len(items) == 0 {
		return nil
	}
	return slices.Clone(items)
}

// Progress counts a todo list. Only completed items count as done: an
// in_progress item is a status change, not work delivered.
type Progress struct {
	Completed int // completed items: the x of "x/y tasks"
	Total     int // every item, cancelled ones included: the y
	Active    int // pending + in_progress: work that remains
}

// Summarize counts items.
func Summarize(items []TodoItem) Progress {
	p := Progress{Total: len(items)}
	for _, item := range items {
		switch {
		case item.Status == TodoCompleted:
			p.Completed++
		case item.Status.Active():
			p.Active++
		}
	}
	return p
}

// String renders "x/y tasks".
func (p Progress) String() string { return fmt.Sprintf("%d/%d tasks", p.Completed, p.Total) }

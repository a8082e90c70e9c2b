package planning

import "fmt"

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

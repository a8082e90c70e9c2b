package planning

import (
	"fmt"
	"strings"
)

// WorkLog is what the work rule knows about a session: the tool calls
// (other than todo_write) since the session's previous accepted todo_write,
// the calls made for each in_progress todo since it went in_progress, and
// the evidence of each completed todo. It belongs with the session's todos
// and is stored with them, so a restart neither forgets work nor invents
// it. The zero value is a session where nothing was done yet.
//
// The Planning module's execution rule 2 — "only updating todo_write without calling
// another tool does not complete an item" — is a prompt there; here it is
// enforced, like the batch rule, at the tool layer:
//   - a todo that was in_progress may become completed only once a call
//     succeeded since it went in_progress (Working);
//   - a todo that goes there directly (the one per call the batch rule
//     allows, or a new one) only once a call succeeded since the previous
//     accepted todo_write (Since).
type WorkLog struct {
	Since   Evidence             `json:"since"`
	Working map[string]*Evidence `json:"working,omitempty"`
	Done    map[string]*Evidence `json:"done,omitempty"`

	// spare are the maps of the write before last, cleared and reused by
	// the next: a todo_write comes every few steps.
	spare [2]map[string]*Evidence
}

// Record adds a tool call (never todo_write) to the work since the last
// accepted todo_write and to every in_progress todo's work: several todos
// in progress at once all count it.
func (w *WorkLog) Record(run ToolRun) {
	w.Since.add(run)
	for _, e := range w.Working {
		e.add(run)
	}
}

// Track makes the log follow a todo list it did not see written: the
// stored list at a run's start. A todo in_progress with no work recorded
// (from before the log existed, or changed by a Cancel) has its work
// counted from now on; entries of todos no longer in_progress go.
func (w *WorkLog) Track(todos []TodoItem) {
	working := make(map[string]*Evidence)
	for _, item := range todos {
		if item.Status != TodoInProgress {
			continue
		}
		if e := w.Working[item.ID]; e != nil {
			working[item.ID] = e
		} else {
			working[item.ID] = new(Evidence)
		}
	}
	w.Working = working
}

// check applies the work rule to a todo_write that would replace the list
// whose statuses are prior with next (already accepted by CheckWrite).
// The error names every todo that would be completed without work, and why.
func (w *WorkLog) check(prior map[string]TodoStatus, next []TodoItem) error {
	var started, direct []TodoItem
	for _, item := range next {
		if item.Status != TodoCompleted {
			continue
		}
		before, existed := prior[item.ID]
		switch {
		case existed && (before == TodoCompleted || before == TodoCancelled):
			// Already done, or the cancelled rule's to refuse.
		case existed && before == TodoInProgress:
			if !w.Working[item.ID].Worked() {
				started = append(started, item)
			}
		case !w.Since.Worked():
			direct = append(direct, item)
		}
	}
	if started == nil && direct == nil {
		return nil
	}
	return fmt.Errorf("%w: %s. Nothing was saved. A todo is completed by real work: "+
		"do it with tools (write or edit the files, run the commands), then mark it completed",
		ErrNoWork, noWorkReasons(started, direct))
}

func noWorkReasons(started, direct []TodoItem) string {
	var reasons []string
	if started != nil {
		reasons = append(reasons, fmt.Sprintf("%s cannot be marked completed: no tool call other than todo_write has succeeded since %s marked in_progress",
			todoNames(started), wasOrWere(started)))
	}
	if direct != nil {
		reasons = append(reasons, fmt.Sprintf("%s cannot go straight to completed: no tool call other than todo_write has succeeded since your previous todo_write",
			todoNames(direct)))
	}
	if len(reasons) == 2 {
		return reasons[0] + "; " + reasons[1]
	}
	return reasons[0]
}

// todoNames names todos by id and, since a model reads its own words
// better than its ids, by their content.
func todoNames(items []TodoItem) string {
	const most = 5
	names := make([]string, 0, min(len(items), most))
	for _, it := range items[:min(len(items), most)] {
		names = append(names, fmt.Sprintf("%q (%s)", it.ID, clipContent(it.Content)))
	}
	s := strings.Join(names, ", ")
	if len(items) > most {
		s += fmt.Sprintf(" and %d more", len(items)-most)
	}
	if len(items) == 1 {
		return "todo " + s
	}
	return "todos " + s
}

// clipContent keeps an error about a todo short whatever its content.
func clipContent(s string) string {
	const most = 60
	if r := []rune(s); len(r) > most {
		return string(r[:most-1]) + "…"
	}
	return s
}

func wasOrWere(items []TodoItem) string {
	if len(items) == 1 {
		return "it was"
	}
	return "they were"
}

// accept records an accepted todo_write that replaced the list whose
// statuses are prior with next: a todo that went in_progress starts with
// no work, a completed one keeps its work as evidence, the rest is
// dropped, and the work since the last write starts again. It returns the
// ids that became completed.
func (w *WorkLog) accept(prior map[string]TodoStatus, next []TodoItem) (completed []string) {
	working, done := reuse(w.spare[0]), reuse(w.spare[1])
	for _, item := range next {
		before, existed := prior[item.ID]
		switch item.Status {
		case TodoInProgress:
			e := w.Working[item.ID]
			if !existed || before != TodoInProgress || e == nil {
				e = new(Evidence)
			}
			working[item.ID] = e
		case TodoCompleted:
			if e := w.completion(item.ID, before, existed); e != nil {
				done[item.ID] = e
			}
			if !existed || before != TodoCompleted {
				completed = append(completed, item.ID)
			}
		}
	}
	w.spare = [2]map[string]*Evidence{w.Working, w.Done}
	w.Since, w.Working, w.Done = Evidence{}, working, done
	return completed
}

// reuse is m emptied, or a new map.
func reuse(m map[string]*Evidence) map[string]*Evidence {
	if m == nil {
		return make(map[string]*Evidence)
	}
	clear(m)
	return m
}

// completion is the evidence a todo completed by this write keeps.
func (w *WorkLog) completion(id string, before TodoStatus, existed bool) *Evidence {
	switch {
	case existed && before == TodoCompleted:
		return w.Done[id]
	case existed && before == TodoInProgress:
		return w.Working[id]
	}
	since := w.Since
	return &since
}

// Checkpoint attaches a checkpoint to a completed todo's evidence; it
// reports false when id is not a completed todo.
func (w *WorkLog) Checkpoint(id string, cp Checkpoint) bool {
	e := w.Done[id]
	if e == nil {
		return false
	}
	e.Checkpoint = &cp
	return true
}

// Evidence returns a copy of the completed todos' evidence by id, nil when
// there is none. The copies share their call lists with the log, which
// never changes a completed todo's calls.
func (w *WorkLog) Evidence() map[string]Evidence {
	if len(w.Done) == 0 {
		return nil
	}
	out := make(map[string]Evidence, len(w.Done))
	for id, e := range w.Done {
		out[id] = *e
	}
	return out
}

func statuses(items []TodoItem) map[string]TodoStatus {
	m := make(map[string]TodoStatus, len(items))
	for _, item := range items {
		m[item.ID] = item.Status
	}
	return m
}

// Apply checks a todo_write that would replace prev with next against
// every rule — the Planning module's (CheckWrite) and the work rule — and records it
// when it is accepted. It returns the list to store and the ids that
// became completed; a refused call changes nothing, here or in the list.
func (w *WorkLog) Apply(prev, next []TodoItem) (accepted []TodoItem, completed []string, err error) {
	prior := statuses(prev)
	accepted, err = checkWrite(prior, next)
	if err == nil {
		err = w.check(prior, accepted)
	}
	if err != nil {
		return nil, nil, err
	}
	return accepted, w.accept(prior, accepted), nil
}

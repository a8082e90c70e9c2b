package render

import (
	"strconv"
	"strings"

	"github.com/h9-app/h9/planning"
)

// recentCompleted is how many of the latest completed todos are kept in view
// ahead of pending ones, so a big plan still shows what just got done.
const recentCompleted = 5

// todoLines renders one line per todo, in plan order, as many as fit in
// capacity units (each line costs Len+1). When not all fit, the lines shown
// are chosen by priority (selectOrder) and the rest counted in hidden.
func todoLines(todos []planning.TodoItem, evidence map[string]planning.Evidence, capacity int) (lines []string, hidden hiddenCount) {
	all := make([]string, len(todos))
	for i, t := range todos {
		all[i] = todoLine(t, evidence)
	}
	shown := make([]bool, len(todos))
	used := 0
	for _, i := range selectOrder(todos) {
		if cost := Len(all[i]) + 1; used+cost <= capacity {
			shown[i] = true
			used += cost
		}
	}
	for i, ok := range shown {
		if ok {
			lines = append(lines, all[i])
		} else {
			hidden.add(todos[i].Status)
		}
	}
	return lines, hidden
}

// todoLine is a todo's icon and content; a completed one's evidence
// follows on the same line.
func todoLine(t planning.TodoItem, evidence map[string]planning.Evidence) string {
	icon := Icon(t.Status)
	room := maxTodoLine - Len(icon) - 1
	var content string
	if e, ok := evidence[t.ID]; ok && t.Status == planning.TodoCompleted {
		content = withEvidence(t.Content, e, room)
	} else {
		content = safeLine(t.Content, room)
	}
	if strings.HasPrefix(content, " — ") || content == "" {
		content = "_(empty)_" + content
	}
	return icon + " " + content
}

// selectOrder lists todo indexes by how much a reader needs them:
//  1. in_progress — what is happening now;
//  2. the recentCompleted latest completed (plan order is execution order,
//     so the last completed in the list are the most recent);
//  3. pending (and unknown statuses) in plan order — what comes next;
//  4. the other completed, newest first;
//  5. cancelled, newest first.
func selectOrder(todos []planning.TodoItem) []int {
	var running, pending, done, cancelled []int
	for i, t := range todos {
		switch t.Status {
		case planning.TodoInProgress:
			running = append(running, i)
		case planning.TodoCompleted:
			done = append(done, i)
		case planning.TodoCancelled:
			cancelled = append(cancelled, i)
		default:
			pending = append(pending, i)
		}
	}
	reverse(done)
	reverse(cancelled)
	recent := min(recentCompleted, len(done))
	order := make([]int, 0, len(todos))
	order = append(order, running...)
	order = append(order, done[:recent]...)
	order = append(order, pending...)
	order = append(order, done[recent:]...)
	return append(order, cancelled...)
}

func reverse(s []int) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// hiddenCount counts the todos left off the checklist, by status.
type hiddenCount struct{ running, pending, done, cancelled int }

func (h *hiddenCount) add(s planning.TodoStatus) {
	switch s {
	case planning.TodoInProgress:
		h.running++
	case planning.TodoCompleted:
		h.done++
	case planning.TodoCancelled:
		h.cancelled++
	default:
		h.pending++
	}
}

func (h hiddenCount) total() int { return h.running + h.pending + h.done + h.cancelled }

// String is "…and N more (2 ▶ in progress, 40 ○ pending, …)".
func (h hiddenCount) String() string {
	var parts []string
	for _, p := range []struct {
		n     int
		label string
	}{
		{h.running, IconInProgress + " in progress"},
		{h.pending, IconPending + " pending"},
		{h.done, IconCompleted + " completed"},
		{h.cancelled, IconCancelled + " cancelled"},
	} {
		if p.n > 0 {
			parts = append(parts, strconv.Itoa(p.n)+" "+p.label)
		}
	}
	return "…and " + strconv.Itoa(h.total()) + " more (" + strings.Join(parts, ", ") + ")"
}

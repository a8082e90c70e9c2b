package planning

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// list builds a todo list from "id:status" pairs; content is derived from id.
func list(pairs ...string) []TodoItem {
	var items []TodoItem
	for _, p := range pairs {
		var id, status string
		for i := range len(p) {
			if p[i] == ':' {
				id, status = p[:i], p[i+1:]
				break
			}
		}
		items = append(items, TodoItem{ID: id, Content: "do " + id, Status: TodoStatus(status)})
	}
	return items
}

// planningModuleBug reproduces the bug harness9's Planning module names: 11 todos, 2 done, and one call that
// jumps the other 9 straight to completed.
func planningModuleBug() (prev, next []TodoItem) {
	for i := 1; i <= 11; i++ {
		id := fmt.Sprintf("t%d", i)
		status := TodoPending
		if i <= 2 {
			status = TodoCompleted
		}
		prev = append(prev, TodoItem{ID: id, Content: "step " + id, Status: status})
		next = append(next, TodoItem{ID: id, Content: "step " + id, Status: TodoCompleted})
	}
	return prev, next
}

func TestCheckWrite(t *testing.T) {
	bugPrev, bugNext := planningModuleBug()
	tests := []struct {
		name    string
		prev    []TodoItem
		next    []TodoItem
		wantErr error
	}{
		{"the Planning module's bug: 9 of 11 jump to completed", bugPrev, bugNext, ErrBatchCompletion},
		{"first plan, all pending", nil, list("a:pending", "b:pending", "c:pending"), nil},
		{"exactly one direct completion", list("a:pending", "b:pending"), list("a:completed", "b:pending"), nil},
		{"two direct completions", list("a:pending", "b:pending"), list("a:completed", "b:completed"), ErrBatchCompletion},
		{"many in_progress to completed at once", list("a:in_progress", "b:in_progress", "c:in_progress"), list("a:completed", "b:completed", "c:completed"), nil},
		{"completed stays completed", list("a:completed", "b:completed", "c:pending"), list("a:completed", "b:completed", "c:completed"), nil},
		{"new item created completed counts as direct", list("a:pending"), list("a:completed", "b:completed"), ErrBatchCompletion},
		{"one new item created completed is allowed", list("a:in_progress"), list("a:completed", "b:completed"), nil},
		{"plan created with two completed items", nil, list("a:completed", "b:completed", "c:pending"), ErrBatchCompletion},
		{"cancelled to completed refused", list("a:cancelled"), list("a:completed"), ErrCancelledCompleted},
		{"cancelled restored to pending", list("a:cancelled"), list("a:pending"), nil},
		{"cancelled restored to in_progress", list("a:cancelled"), list("a:in_progress"), nil},
		{"pending to cancelled", list("a:pending", "b:in_progress"), list("a:cancelled", "b:cancelled"), nil},
		{"items dropped from the list", list("a:pending", "b:pending"), list("b:pending"), nil},
		{"empty list clears", list("a:pending"), nil, nil},
		{"empty id", nil, []TodoItem{{ID: " ", Content: "x", Status: TodoPending}}, ErrEmptyID},
		{"duplicate id", nil, list("a:pending", "a:pending"), ErrDuplicateID},
		{"empty content", nil, []TodoItem{{ID: "a", Content: "\t", Status: TodoPending}}, ErrEmptyContent},
		{"unknown status", nil, list("a:done"), ErrUnknownStatus},
		{"empty status", nil, list("a:"), ErrUnknownStatus},
		{"too many items", nil, make([]TodoItem, MaxTodos+1), ErrTooManyTodos},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckWrite(tt.prev, tt.next)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CheckWrite error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if got != nil {
					t.Errorf("refused call returned a list: %v", got)
				}
				return
			}
			if diff := cmp.Diff(cloneItems(tt.next), got); diff != "" {
				t.Errorf("accepted list differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckWriteMessagesGuideTheModel(t *testing.T) {
	prev, next := planningModuleBug()
	_, err := CheckWrite(prev, next)
	for _, want := range []string{"9 todos", "one at a time", "in_progress", "Nothing was saved", `"t3"`, "and 4 more"} {
		if !containsFold(err.Error(), want) {
			t.Errorf("batch error %q does not mention %q", err, want)
		}
	}
	_, err = CheckWrite(list("x:cancelled"), list("x:completed"))
	if !containsFold(err.Error(), "pending or in_progress first") {
		t.Errorf("cancelled error %q does not say how to recover", err)
	}
}

func TestCheckWriteDoesNotAliasInput(t *testing.T) {
	next := list("a:pending")
	got, err := CheckWrite(nil, next)
	if err != nil {
		t.Fatal(err)
	}
	next[0].Status = TodoCancelled
	if got[0].Status != TodoPending {
		t.Fatal("accepted list aliases the proposed list")
	}
}

package planning

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func TestTodoStoreCopies(t *testing.T) {
	input := list("a:pending", "b:in_progress")
	var s TodoStore
	returned := s.Write(input)

	input[0].Content = "mutated input"
	returned[1].Status = TodoCancelled
	read := s.Read()
	read[0].ID = "mutated read"

	want := list("a:pending", "b:in_progress")
	if diff := cmp.Diff(want, s.Read()); diff != "" {
		t.Fatalf("store changed through an alias (-want +got):\n%s", diff)
	}
}

func TestTodoStoreEmpty(t *testing.T) {
	var s TodoStore
	if got := s.Read(); len(got) != 0 {
		t.Fatalf("zero store Read = %v", got)
	}
	s.Write(list("a:pending"))
	s.Write(nil)
	if got := s.Read(); len(got) != 0 {
		t.Fatalf("after Write(nil) Read = %v", got)
	}
	if got := NewTodoStore(list("a:pending")...).Read(); len(got) != 1 {
		t.Fatalf("NewTodoStore lost items: %v", got)
	}
}

func TestTodoStoreConcurrent(t *testing.T) {
	var s TodoStore
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				got := s.Write(list(fmt.Sprintf("w%d-%d:pending", w, i), "z:in_progress"))
				got[0].Status = TodoCompleted // must never reach the store
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				for _, item := range s.Read() {
					if item.Status == TodoCompleted {
						t.Error("a caller's mutation reached the store")
						return
					}
				}
				_ = s.FormatForInjection()
				_ = s.Progress()
			}
		}()
	}
	wg.Wait()
}

func TestFormatForInjection(t *testing.T) {
	tests := []struct {
		name  string
		items []TodoItem
		want  string
	}{
		{"none", nil, ""},
		{"nothing active", list("a:completed", "b:cancelled"), ""},
		{"mixed", []TodoItem{
			{ID: "1", Content: "implement handler/user.go", Status: TodoPending},
			{ID: "2", Content: "write tests", Status: TodoCompleted},
			{ID: "3", Content: "configure the database", Status: TodoInProgress},
			{ID: "4", Content: "drop", Status: TodoCancelled},
		}, "[ ] implement handler/user.go\n[>] configure the database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewTodoStore(tt.items...).FormatForInjection(); got != tt.want {
				t.Errorf("FormatForInjection = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	p := Summarize(list("a:completed", "b:in_progress", "c:pending", "d:cancelled", "e:completed"))
	if want := (Progress{Completed: 2, Total: 5, Active: 2}); p != want {
		t.Fatalf("Summarize = %+v, want %+v", p, want)
	}
	if got := p.String(); got != "2/5 tasks" {
		t.Fatalf("String = %q", got)
	}
}

func TestPlanMode(t *testing.T) {
	tests := []struct {
		mode PlanMode
		next PlanMode
		name string
	}{
		{PlanModeDefault, PlanModePlan, "default"},
		{PlanModePlan, PlanModeAutoEdit, "plan"},
		{PlanModeAutoEdit, PlanModeDefault, "auto-edit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.mode.Next(); got != tt.next {
				t.Errorf("%v.Next() = %v, want %v", tt.mode, got, tt.next)
			}
			if got := tt.mode.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			if !tt.mode.Valid() {
				t.Errorf("%v not valid", tt.mode)
			}
		})
	}
	if PlanMode(3).Valid() || PlanMode(-1).Valid() {
		t.Error("out-of-range modes reported valid")
	}
}

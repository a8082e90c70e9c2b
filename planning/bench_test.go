package planning

import (
	"fmt"
	"testing"
)

// BenchmarkCheckAndWrite100 measures one todo_write of a 100-item list:
// validation against the previous list plus the store's atomic replace.
func BenchmarkCheckAndWrite100(b *testing.B) {
	prev := make([]TodoItem, 100)
	for i := range prev {
		prev[i] = TodoItem{ID: fmt.Sprintf("t%03d", i), Content: fmt.Sprintf("implement step %d of the plan", i), Status: TodoInProgress}
	}
	next := make([]TodoItem, len(prev))
	copy(next, prev)
	for i := range next {
		next[i].Status = TodoCompleted
	}
	store := NewTodoStore(prev...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		accepted, err := CheckWrite(store.Read(), next)
		if err != nil {
			b.Fatal(err)
		}
		store.Write(accepted)
		store.Write(prev)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/write")
}

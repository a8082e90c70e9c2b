package planning

import (
	"encoding/json"
	"testing"
)

// FuzzCheckWrite feeds arbitrary previous/proposed lists (as JSON) to the
// rules: they must never panic, and an accepted list must obey every rule.
func FuzzCheckWrite(f *testing.F) {
	f.Add(`[{"id":"a","content":"x","status":"pending"}]`, `[{"id":"a","content":"x","status":"completed"}]`)
	f.Add(`[{"id":"a","content":"x","status":"cancelled"}]`, `[{"id":"a","content":"x","status":"completed"}]`)
	f.Add(`[]`, `[{"id":"a","content":"x","status":"completed"},{"id":"b","content":"y","status":"completed"}]`)
	f.Add(`null`, `[{"id":"","content":"","status":"??"}]`)
	f.Fuzz(func(t *testing.T, prevJSON, nextJSON string) {
		var prev, next []TodoItem
		if json.Unmarshal([]byte(prevJSON), &prev) != nil || json.Unmarshal([]byte(nextJSON), &next) != nil {
			return
		}
		got, err := CheckWrite(prev, next)
		if err != nil {
			if got != nil {
				t.Fatalf("refused call returned %v", got)
			}
			return
		}
		prior := map[string]TodoStatus{}
		for _, p := range prev {
			prior[p.ID] = p.Status
		}
		direct := 0
		for _, item := range got {
			if !item.Status.Valid() {
				t.Fatalf("accepted unknown status %q", item.Status)
			}
			if item.Status != TodoCompleted {
				continue
			}
			before, ok := prior[item.ID]
			if ok && before == TodoCancelled {
				t.Fatalf("accepted cancelled → completed for %q", item.ID)
			}
			if !ok || before == TodoPending {
				direct++
			}
		}
		if direct > MaxDirectCompletions {
			t.Fatalf("accepted %d direct completions", direct)
		}
	})
}

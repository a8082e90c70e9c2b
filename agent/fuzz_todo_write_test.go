package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/h9-app/h9/planning"
)

// fuzzPrevLists are the lists a fuzzed todo_write call starts from.
var fuzzPrevLists = [][]planning.TodoItem{
	nil,
	{{ID: "a", Content: "read the code", Status: planning.TodoPending}},
	{
		{ID: "a", Content: "read", Status: planning.TodoCompleted},
		{ID: "b", Content: "write", Status: planning.TodoInProgress},
		{ID: "c", Content: "test", Status: planning.TodoPending},
		{ID: "d", Content: "dropped", Status: planning.TodoCancelled},
	},
}

// FuzzTodoWriteArgs feeds raw JSON arguments through the real tool entry
// point (the toolset of a plan-mode and a default-mode run): never a panic,
// a refusal is an error result that changes and saves nothing, and an
// accepted call stores exactly what it reports.
func FuzzTodoWriteArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"todos":[]}`, `{"todos":null}`, `not json`, `{"todos":"x"}`,
		`{"todos":[{"id":"a","content":"x","status":"in_progress"}]}`,
		`{"todos":[{"id":"a","content":"<!channel> <@U1>","status":"completed"},{"id":"b","content":"y","status":"completed"}]}`,
		`{"todos":[{"id":"","content":"","status":"bogus"}]}`,
		`{"todos":[{"id":"a","content":"x","status":"pending"},{"id":"a","content":"y","status":"pending"}]}`,
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, args string, pick uint8) {
		prev := fuzzPrevLists[int(pick)%len(fuzzPrevLists)]
		mode := planning.PlanModePlan
		if pick&4 != 0 {
			mode = planning.PlanModeDefault
		}
		var saved [][]planning.TodoItem
		env := &toolEnv{
			sessionID: "fuzz",
			todos:     planning.NewTodoStore(prev...),
			saveTodos: func(items []planning.TodoItem) error {
				saved = append(saved, slices.Clone(items))
				return nil
			},
		}
		res := newToolset(mode, nil).call(context.Background(), env, todoWriteName, args)
		after := env.todos.Read()
		if res.IsError {
			if res.TodosChanged || len(saved) > 0 || !slices.Equal(after, prev) {
				t.Fatalf("a refused call changed something: %+v saved=%v after=%v", res, saved, after)
			}
			return
		}
		if !res.TodosChanged {
			if len(saved) > 0 || !slices.Equal(after, prev) {
				t.Fatalf("a read changed the list: saved=%v after=%v", saved, after)
			}
			return
		}
		if len(saved) != 1 || !slices.Equal(saved[0], after) || !slices.Equal(res.Todos, after) {
			t.Fatalf("stored %v, saved %v, reported %v", after, saved, res.Todos)
		}
		if _, err := planning.CheckWrite(prev, after); err != nil {
			t.Fatalf("accepted a list the rules refuse: %v", err)
		}
	})
}

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
// point (the toolset of a plan-mode and a default-mode run), with or
// without a successful call before it: never a panic, a refusal is an
// error result that changes nothing and reports no change (so the run
// saves and emits nothing), an accepted call stores in the live list
// exactly what it reports, and completes nothing without work behind it.
// Persisting a reported change is the run's job, with the step's commit
// (TestTodosStoredBeforeSnapshotEvent).
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
		work := &planning.WorkLog{}
		work.Track(prev)
		worked := pick&8 != 0
		if worked {
			work.Record(planning.ToolRun{Tool: bashName, Target: "make"})
		}
		env := &toolEnv{sessionID: "fuzz", todos: planning.NewTodoStore(prev...), work: work}
		res := newToolset(mode, nil).call(context.Background(), env, todoWriteName, args)
		after := env.todos.Read()
		if res.IsError {
			if res.TodosChanged || !slices.Equal(after, prev) {
				t.Fatalf("a refused call changed something: %+v after=%v", res, after)
			}
			return
		}
		if !res.TodosChanged {
			if !slices.Equal(after, prev) {
				t.Fatalf("a read changed the list: after=%v", after)
			}
			return
		}
		if !slices.Equal(res.Todos, after) {
			t.Fatalf("stored %v, reported %v", after, res.Todos)
		}
		if _, err := planning.CheckWrite(prev, after); err != nil {
			t.Fatalf("accepted a list the rules refuse: %v", err)
		}
		if len(res.Completed) > 0 && !worked {
			t.Fatalf("completed %v with no work done", res.Completed)
		}
	})
}

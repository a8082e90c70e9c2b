package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/h9-app/h9/planning"
)

const todoWriteName = "todo_write"

// todoWriteParams: a nil Todos (field omitted) reads the list; any array,
// even empty, replaces it.
type todoWriteParams struct {
	Todos *[]planning.TodoItem `json:"todos"`
}

// todoWriteDescription is the Planning module's description in English, plus the
// batch rule and the work rule, so the model knows them before it breaks
// them.
const todoWriteDescription = "Maintain the task list of the current session. " +
	"Providing the todos array replaces the whole list (atomic replace); omitting todos reads the current list.\n" +
	"When a task involves 3 or more independent steps, call this tool to record the task list before starting, " +
	"and right after each step update that item's status to in_progress or completed.\n" +
	"At most one item may go from pending straight to completed in one call: mark an item in_progress, do its real work with other tools, then mark it completed.\n" +
	"An item can only become completed after real work: at least one call of another tool (not todo_write) must have succeeded " +
	"since it was marked in_progress, or, for an item going straight to completed, since your previous todo_write. Otherwise the call is refused."

var todoWriteSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The complete task list (full replace). Omit this field to only read the current list.",
      "items": {
        "type": "object",
        "properties": {
          "id":      {"type": "string", "description": "Short unique id, stable across updates."},
          "content": {"type": "string", "description": "The concrete action."},
          "status":  {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]}
        },
        "required": ["id", "content", "status"]
      }
    }
  }
}`)

var todoWriteTool = tool{
	Name:        todoWriteName,
	Description: todoWriteDescription,
	Schema:      todoWriteSchema,
	Summary:     todoWriteSummary,
	Run: func(_ context.Context, env *toolEnv, args string) toolResult {
		var p todoWriteParams
		if err := parseArgs(args, &p); err != nil {
			return fail(err)
		}
		if p.Todos == nil {
			return ok(todosJSON(env.todos.Read()))
		}
		// The whole list is checked, against every rule, before anything
		// is stored or recorded.
		next, completed, err := applyWrite(env.work, env.todos.Read(), *p.Todos)
		if err != nil {
			return fail(err)
		}
		// Saved by the run with this step's commit, before the snapshot event.
		stored := env.todos.Write(next)
		msg := fmt.Sprintf("Todos updated: %s.\n%s", planning.Summarize(stored), todosJSON(stored))
		return toolResult{Output: msg, Todos: stored, TodosChanged: true, Completed: completed}
	},
}

// applyWrite checks a write against every rule and records it in the
// work log; without one (see trackWork) only the Planning module's rules apply.
func applyWrite(work *planning.WorkLog, prev, next []planning.TodoItem) ([]planning.TodoItem, []string, error) {
	if work == nil {
		accepted, err := planning.CheckWrite(prev, next)
		return accepted, nil, err
	}
	return work.Apply(prev, next)
}

func todoWriteSummary(args string) string {
	var p todoWriteParams
	if json.Unmarshal([]byte(args), &p) != nil || p.Todos == nil {
		return "read"
	}
	return planning.Summarize(*p.Todos).String()
}

func todosJSON(items []planning.TodoItem) string {
	if items == nil {
		items = []planning.TodoItem{}
	}
	data, _ := json.Marshal(items)
	return string(data)
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/h9-app/h9/planning"
)

// workModel answers in-process: each step reads a file (the work) and
// moves the todo list on by one (the todo in progress completed, the next
// one started, among ten), until steps calls; then a final text.
type workModel struct {
	steps int64
	calls atomic.Int64
}

func (m *workModel) Complete(context.Context, ModelRequest) (Answer, error) {
	msg := Message{Role: RoleAssistant}
	n := m.calls.Add(1)
	if n > m.steps {
		msg.Content = "done"
		return Answer{Message: msg, Usage: Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}, nil
	}
	msg.ToolCalls = []ToolCall{
		{ID: "call_1", Type: "function", Function: FunctionCall{Name: readFileName, Arguments: `{"path":"notes.txt"}`}},
		{ID: "call_2", Type: "function", Function: FunctionCall{Name: todoWriteName, Arguments: rollingTodos(int(n))}},
	}
	return Answer{Message: msg, Usage: Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}, nil
}

// rollingTodos is step n's list of ten: todo n%10 in progress, the one
// before it just completed, the others completed once visited.
func rollingTodos(n int) string {
	items := make([]string, 10)
	for k := range items {
		status := "pending"
		switch {
		case k == n%10:
			status = "in_progress"
		case n >= 10 || k < n%10:
			status = "completed"
		}
		items[k] = fmt.Sprintf(`{"id":"t%d","content":"implement step %d of the plan","status":%q}`, k, k, status)
	}
	return `{"todos":[` + join(items) + `]}`
}

func join(items []string) string {
	out := items[0]
	for _, s := range items[1:] {
		out += "," + s
	}
	return out
}

// BenchmarkStepEvidence: the in-process harness step — a model call, a
// read_file and a todo_write that completes one todo and starts the next,
// their events and the step's bbolt commit — with the work log (the work
// rule, evidence kept and stored with every step) against without it (the
// code path before it existed), side by side.
func BenchmarkStepEvidence(b *testing.B) {
	for _, where := range dbPlaces() {
		for _, tracked := range []bool{false, true} {
			name := "untracked"
			if tracked {
				name = "tracked"
			}
			b.Run(name+"/db="+where.name, func(b *testing.B) {
				defer func(was bool) { trackWork = was }(trackWork)
				trackWork = tracked
				model := &workModel{steps: int64(b.N)}
				h := newHarness(b, func(c *Config) { c.Model = model; c.MaxSteps = b.N + 1 })
				h.moveDB(where.dir(b))
				if err := os.WriteFile(filepath.Join(h.wsDir("bench"), "notes.txt"), []byte("the plan\n"), 0o600); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				var res Result
				measure(b, b.N, func() {
					var err error
					if res, err = h.eng.Run(context.Background(), "bench", task("go"), RunOptions{Events: func(Event) {}}); err != nil {
						b.Fatal(err)
					}
				})
				if tracked && b.N >= 2 && len(res.Evidence) == 0 {
					b.Fatal("no evidence kept: the tracked run did not track")
				}
			})
		}
	}
}

// BenchmarkTrackingAlone is what BenchmarkStepEvidence's tracked step does
// more, without the step around it: recording the call, the work rule on
// the todo_write, the evidence snapshot and the state's encoding, against
// the Planning module's rules and the state without the log.
func BenchmarkTrackingAlone(b *testing.B) {
	lists := make([][]planning.TodoItem, 30)
	for i := range lists {
		var p todoWriteParams
		if err := json.Unmarshal([]byte(rollingTodos(i+1)), &p); err != nil {
			b.Fatal(err)
		}
		lists[i] = *p.Todos
	}
	for _, tracked := range []bool{false, true} {
		name := map[bool]string{false: "untracked", true: "tracked"}[tracked]
		b.Run(name, func(b *testing.B) {
			var st sessionState
			prev := lists[0]
			st.Work.Track(prev)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var next []planning.TodoItem
				var err error
				if tracked {
					st.Work.Record(planning.ToolRun{Tool: readFileName, Target: "notes.txt"})
					next, _, err = st.Work.Apply(prev, lists[i%29+1])
					_ = st.Work.Evidence()
				} else {
					next, err = planning.CheckWrite(prev, lists[i%29+1])
				}
				if err != nil {
					b.Fatal(err)
				}
				prev = next
				if _, err := encodeState(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package planning

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// workOp is one thing that happens to a session in a work-rule script: a
// todo_write (want: the error it must get, nil = accepted), a tool call, or
// a restart (the log and the list go through JSON, as the store keeps
// them).
type workOp struct {
	write   []TodoItem
	want    error
	call    *ToolRun
	restart bool
	set     []TodoItem // the stored list changes without a todo_write (the Cancel button)
}

func write(pairs ...string) workOp { return workOp{write: list(pairs...)} }

func refused(err error, pairs ...string) workOp { return workOp{write: list(pairs...), want: err} }

func worked(tool, target string) workOp { return workOp{call: &ToolRun{Tool: tool, Target: target}} }

func failedCall(tool, target string) workOp {
	return workOp{call: &ToolRun{Tool: tool, Target: target, Failed: true}}
}

var restart = workOp{restart: true}

func set(pairs ...string) workOp { return workOp{set: list(pairs...)} }

// runWork plays a script against a fresh session whose stored list starts
// as start (with an empty log: a session from before the log existed).
func runWork(t *testing.T, start []TodoItem, ops []workOp) (*WorkLog, []TodoItem) {
	t.Helper()
	log, todos := &WorkLog{}, start
	log.Track(todos)
	for i, op := range ops {
		switch {
		case op.restart: // as a run's start after one: load, then track
			log, todos = roundTrip(t, log), roundTrip(t, todos)
			log.Track(todos)
		case op.call != nil:
			log.Record(*op.call)
		case op.set != nil:
			todos = op.set
		default:
			before, _ := json.Marshal(log)
			got, _, err := log.Apply(todos, op.write)
			if !errors.Is(err, op.want) || (op.want == nil) != (err == nil) {
				t.Fatalf("op %d: write %v: error %v, want %v", i, op.write, err, op.want)
			}
			if err != nil {
				if after, _ := json.Marshal(log); string(after) != string(before) {
					t.Fatalf("op %d: a refused write changed the log:\n%s\n%s", i, before, after)
				}
				continue
			}
			todos = got
		}
	}
	return log, todos
}

func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// workRuleCases are every path to completed: direct and via in_progress,
// with and without work, several todos in progress at once, a todo that
// went in_progress in an earlier run or before a restart.
var workRuleCases = []struct {
	name  string
	start []TodoItem
	ops   []workOp
}{
	{"direct without work is refused", nil, []workOp{
		write("a:pending"), refused(ErrNoWork, "a:completed")}},
	{"direct after a successful call", nil, []workOp{
		write("a:pending"), worked("write_file", "a.txt"), write("a:completed")}},
	{"direct after only a failed call is refused", nil, []workOp{
		write("a:pending"), failedCall("bash", "go test ./..."), refused(ErrNoWork, "a:completed")}},
	{"via in_progress without work is refused", nil, []workOp{
		write("a:in_progress"), refused(ErrNoWork, "a:completed")}},
	{"via in_progress after a successful call", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), write("a:completed")}},
	{"via in_progress after only a failed call is refused", nil, []workOp{
		write("a:in_progress"), failedCall("edit_file", "a.go"), refused(ErrNoWork, "a:completed")}},
	{"work before in_progress does not count for it", nil, []workOp{
		worked("write_file", "a.txt"), write("a:in_progress"), refused(ErrNoWork, "a:completed")}},
	{"another accepted write in between uses up the direct allowance", nil, []workOp{
		write("a:pending", "b:pending"), worked("bash", "ls"), write("a:pending", "b:in_progress"),
		refused(ErrNoWork, "a:completed", "b:in_progress")}},
	{"several in_progress at once share a call", nil, []workOp{
		write("a:in_progress", "b:in_progress", "c:in_progress"), worked("bash", "make all"),
		write("a:completed", "b:completed", "c:completed")}},
	{"one of several started after the work is refused", nil, []workOp{
		write("a:in_progress", "b:pending"), worked("bash", "make a"), write("a:in_progress", "b:in_progress"),
		refused(ErrNoWork, "a:completed", "b:completed"), write("a:completed", "b:in_progress")}},
	{"in_progress with work plus one direct with work", nil, []workOp{
		write("a:in_progress", "b:pending"), worked("write_file", "a.txt"), write("a:completed", "b:completed")}},
	{"in_progress in an earlier run, work in this one", nil, []workOp{
		write("a:in_progress"), restart, worked("write_file", "a.txt"), write("a:completed")}},
	{"work before a restart is kept", nil, []workOp{
		write("a:in_progress"), worked("write_file", "a.txt"), restart, write("a:completed")}},
	{"direct allowance is kept across a restart", nil, []workOp{
		write("a:pending"), worked("bash", "go test ./..."), restart, write("a:completed")}},
	{"a restart invents no work", nil, []workOp{
		write("a:in_progress"), restart, refused(ErrNoWork, "a:completed")}},
	{"in_progress from before the log existed has no work, then counts it", list("a:in_progress"), []workOp{
		refused(ErrNoWork, "a:completed"), worked("bash", "go vet ./..."), write("a:completed")}},
	{"a list changed behind the log's back is tracked at the next start", nil, []workOp{
		write("a:in_progress", "b:in_progress"), worked("bash", "make"), set("a:cancelled", "b:in_progress", "c:in_progress"),
		restart, refused(ErrNoWork, "a:cancelled", "b:completed", "c:completed"), worked("bash", "make c"),
		write("a:cancelled", "b:completed", "c:completed")}},
	{"the Cancel button during a run, then in_progress again", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), set("a:cancelled"), write("a:in_progress"),
		refused(ErrNoWork, "a:completed")}},
	{"completed stays completed without more work", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), write("a:completed"), write("a:completed", "b:pending")}},
	{"completed from before the log existed stays completed", list("a:completed"), []workOp{
		write("a:completed", "b:pending")}},
	{"a reopened todo needs new work", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), write("a:completed"), write("a:in_progress"),
		refused(ErrNoWork, "a:completed"), worked("bash", "make again"), write("a:completed")}},
	{"in_progress set back to pending loses its work", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), write("a:pending"), refused(ErrNoWork, "a:completed")}},
	{"cancelled then in_progress again needs new work", nil, []workOp{
		write("a:in_progress"), worked("bash", "make"), write("a:cancelled"), write("a:in_progress"),
		refused(ErrNoWork, "a:completed")}},
	{"new todo created completed after work", nil, []workOp{
		worked("write_file", "notes.md"), write("a:completed", "b:pending")}},
	{"first plan with a completed todo and no work", nil, []workOp{
		refused(ErrNoWork, "a:completed", "b:pending")}},
	{"a refused write keeps the work", nil, []workOp{
		write("a:in_progress", "b:pending"), worked("bash", "make"),
		refused(ErrDuplicateID, "a:completed", "a:pending"), write("a:completed", "b:pending")}},
	{"a refused write keeps the direct allowance", nil, []workOp{
		write("a:pending", "b:pending"), worked("bash", "make"),
		refused(ErrBatchCompletion, "a:completed", "b:completed"), write("a:completed", "b:pending")}},
	{"batch rule unchanged: two direct completions even with work", nil, []workOp{
		write("a:pending", "b:pending"), worked("bash", "make"), refused(ErrBatchCompletion, "a:completed", "b:completed")}},
	{"cancelled rule unchanged, even with work", nil, []workOp{
		write("a:cancelled"), worked("bash", "make"), refused(ErrCancelledCompleted, "a:completed")}},
}

func TestWorkRule(t *testing.T) {
	for _, tt := range workRuleCases {
		t.Run(tt.name, func(t *testing.T) { runWork(t, tt.start, tt.ops) })
	}
}

func TestWorkRuleErrorNamesTodoAndRule(t *testing.T) {
	log := &WorkLog{}
	prev, _, _ := log.Apply(nil, list("a:in_progress", "b:in_progress", "c:pending"))
	_, _, err := log.Apply(prev, list("a:completed", "b:completed", "c:completed"))
	for _, want := range []string{`todos "a" (do a), "b" (do b) cannot be marked completed`, "since they were marked in_progress",
		`todo "c" (do c) cannot go straight to completed`, "since your previous todo_write", "Nothing was saved", "todo_write"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	_, _, err = log.Apply(prev, list("a:completed", "b:in_progress", "c:pending"))
	if want := `todo "a" (do a) cannot be marked completed: no tool call other than todo_write has succeeded since it was marked in_progress`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestEvidence(t *testing.T) {
	exit0, exit1 := 0, 1
	log := &WorkLog{}
	todos, _, _ := log.Apply(nil, list("a:in_progress", "b:pending", "c:pending"))
	log.Record(ToolRun{Tool: "bash", Target: "go test ./...", Failed: true, Exit: &exit1})
	log.Record(ToolRun{Tool: "write_file", Target: "a.go"})
	log.Record(ToolRun{Tool: "bash", Target: "go test ./...", Exit: &exit0})
	todos, completed, err := log.Apply(todos, list("a:completed", "b:pending", "c:pending"))
	if err != nil || !cmp.Equal(completed, []string{"a"}) {
		t.Fatalf("completing a: %v, completed %v", err, completed)
	}
	want := Evidence{Made: 3, Succeeded: 2, Calls: []ToolRun{
		{Tool: "bash", Target: "go test ./...", Failed: true, Exit: &exit1},
		{Tool: "write_file", Target: "a.go"},
		{Tool: "bash", Target: "go test ./...", Exit: &exit0},
	}}
	if diff := cmp.Diff(map[string]Evidence{"a": want}, log.Evidence()); diff != "" {
		t.Fatalf("evidence (-want +got):\n%s", diff)
	}

	for i := range MaxEvidenceCalls + 3 {
		log.Record(ToolRun{Tool: "write_file", Target: string(rune('0' + i))})
	}
	todos, _, _ = log.Apply(todos, list("a:completed", "b:completed", "c:pending"))
	b := log.Evidence()["b"]
	if b.Made != MaxEvidenceCalls+3 || len(b.Calls) != MaxEvidenceCalls || b.Calls[len(b.Calls)-1].Target != "6" || b.Calls[0].Target != "3" {
		t.Fatalf("b's evidence keeps the wrong calls: %+v", b)
	}
	if !log.Checkpoint("b", Checkpoint{Commit: "a1b2c3d", Added: 12, Deleted: 3}) || log.Checkpoint("c", Checkpoint{Commit: "x"}) {
		t.Fatal("a checkpoint attaches to completed todos only")
	}
	log = roundTrip(t, log)
	if cp := log.Evidence()["b"].Checkpoint; cp == nil || *cp != (Checkpoint{Commit: "a1b2c3d", Added: 12, Deleted: 3}) {
		t.Fatalf("checkpoint after a restart: %+v", cp)
	}
	if got := log.Evidence()["a"]; got.Made != 3 {
		t.Fatalf("a's evidence lost by a later write or a restart: %+v", got)
	}
	_, _, _ = log.Apply(todos, list("b:completed", "c:pending"))
	if _, kept := log.Evidence()["a"]; kept || len(log.Evidence()) != 1 {
		t.Fatalf("a todo dropped from the list keeps evidence: %v", log.Evidence())
	}
}

func TestEvidenceIsNotWrittenByTheModel(t *testing.T) {
	var items []TodoItem
	raw := `[{"id":"a","content":"x","status":"completed","evidence":{"calls":[{"tool":"bash"}],"ok":9},"made":9,"ok":9}]`
	if err := json.Unmarshal([]byte(raw), &items); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (&WorkLog{}).Apply(nil, items); !errors.Is(err, ErrNoWork) {
		t.Fatalf("evidence in the model's JSON was believed: %v", err)
	}
	if data, _ := json.Marshal(TodoItem{}); strings.Contains(string(data), "evidence") || strings.Contains(string(data), "calls") {
		t.Fatalf("TodoItem's JSON carries evidence: %s", data)
	}
}

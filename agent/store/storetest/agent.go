package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/planning"
)

// agentCases: what the engine relies on for its sessions.
var agentCases = []testCase{
	{"AgentMissingSessionIsEmpty", testMissingSessionIsEmpty},
	{"AgentStepsAppendInOrder", testStepsAppendInOrder},
	{"AgentStepIsOneAtomicWrite", testStepIsAtomic},
	{"AgentStepKeepsWhatItDoesNotSet", testStepKeepsUnset},
	{"AgentReplaceHistoryKeepsTodos", testReplaceHistory},
	{"AgentTodosAlone", testTodosAlone},
	{"AgentSessionsAreIsolated", testAgentSessionsIsolated},
	{"AgentSessionSurvivesReopen", testAgentSurvivesReopen},
}

func testMissingSessionIsEmpty(t *testing.T, fresh Fresh) {
	b := open(t, fresh)
	sess, err := b.LoadSession(t.Context(), "T1/C1/never")
	if err != nil {
		t.Fatalf("LoadSession of a session never written: %v, want no error", err)
	}
	if len(sess.Messages) != 0 || len(sess.Todos) != 0 || sess.State != nil {
		t.Errorf("never-written session = %+v, want empty", sess)
	}
	items, err := b.Todos(t.Context(), "T1/C1/never")
	if err != nil || len(items) != 0 {
		t.Errorf("Todos of a session never written = %v, %v; want none, no error", items, err)
	}
}

func testStepsAppendInOrder(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	first, second := msgs("plan it", "assistant call", "tool result"), msgs("final answer")
	list := todos(planning.TodoInProgress, planning.TodoPending)
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: first, Todos: &list, State: json.RawMessage(`{"n":1}`)}))
	must(t, b.AppendStep(ctx, "s", store.Step{First: 3, Messages: second, State: json.RawMessage(`{"n":2}`)}))
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, append(first, second...))
	wantTodos(t, sess.Todos, list)
	if !sameJSON(sess.State, []byte(`{"n":2}`)) {
		t.Errorf("state = %s, want the last step's", sess.State)
	}
}

// A step at the wrong index is refused whole: none of its messages, todos
// or state is stored, so a run never commits over a history it did not see.
func testStepIsAtomic(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: msgs("one", "two"), State: json.RawMessage(`{"n":1}`)}))
	list := todos(planning.TodoCompleted)
	for _, first := range []int{0, 1, 3} {
		err := b.AppendStep(ctx, "s", store.Step{First: first, Messages: msgs("stale"), Todos: &list, State: json.RawMessage(`{"n":9}`)})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("step at %d over 2 stored messages: err = %v, want ErrConflict", first, err)
		}
	}
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("one", "two"))
	wantTodos(t, sess.Todos, nil)
	if !sameJSON(sess.State, []byte(`{"n":1}`)) {
		t.Errorf("state = %s after refused steps, want the first step's", sess.State)
	}
}

func testStepKeepsUnset(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	list := todos(planning.TodoPending)
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: msgs("a"), Todos: &list, State: json.RawMessage(`{"n":1}`)}))
	must(t, b.AppendStep(ctx, "s", store.Step{First: 1, Messages: msgs("b")})) // no todos, no state
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantTodos(t, sess.Todos, list)
	if !sameJSON(sess.State, []byte(`{"n":1}`)) {
		t.Errorf("state = %s, want it kept", sess.State)
	}
	empty := []planning.TodoItem{}
	must(t, b.AppendStep(ctx, "s", store.Step{First: 2, Todos: &empty})) // todos only, cleared
	sess, err = b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("a", "b"))
	wantTodos(t, sess.Todos, nil)
}

func testReplaceHistory(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	list := todos(planning.TodoCompleted, planning.TodoInProgress)
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: msgs("1", "2", "3", "4"), Todos: &list, State: json.RawMessage(`{"n":1}`)}))
	must(t, b.ReplaceHistory(ctx, "s", msgs("summary", "4"), json.RawMessage(`{"n":0}`)))
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("summary", "4"))
	wantTodos(t, sess.Todos, list)
	if !sameJSON(sess.State, []byte(`{"n":0}`)) {
		t.Errorf("state = %s, want the replacement's", sess.State)
	}
	if err := b.AppendStep(ctx, "s", store.Step{First: 4, Messages: msgs("x")}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a step after the old length: err = %v, want ErrConflict", err)
	}
	must(t, b.AppendStep(ctx, "s", store.Step{First: 2, Messages: msgs("5")}))
	sess, err = b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("summary", "4", "5"))
}

func testTodosAlone(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: msgs("a")}))
	list := todos(planning.TodoCancelled, planning.TodoCompleted)
	must(t, b.SaveTodos(ctx, "s", list))
	got, err := b.Todos(ctx, "s")
	must(t, err)
	wantTodos(t, got, list)
	must(t, b.SaveTodos(ctx, "new", list)) // a session may start with its todos
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("a"))
	wantTodos(t, sess.Todos, list)
	if sess, err := b.LoadSession(ctx, "new"); err != nil || len(sess.Messages) != 0 {
		t.Errorf("session with todos only = %+v, %v", sess, err)
	}
}

// Sessions whose ids share a prefix or look like paths see only their own data.
func testAgentSessionsIsolated(t *testing.T, fresh Fresh) {
	b, ctx := open(t, fresh), t.Context()
	ids := []string{"T1/C1/1.1", "T1/C1/1.10", "T1/C1", "/C1/1.1", "T1/C10/1.1"}
	for i, id := range ids {
		list := todos(planning.TodoStatus("pending"))
		list[0].Content = id
		must(t, b.AppendStep(ctx, id, store.Step{First: 0, Messages: msgs(id), Todos: &list, State: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`)}))
	}
	for i, id := range ids {
		sess, err := b.LoadSession(ctx, id)
		must(t, err)
		wantMessages(t, sess.Messages, msgs(id))
		if len(sess.Todos) != 1 || sess.Todos[0].Content != id {
			t.Errorf("%s: todos %+v", id, sess.Todos)
		}
		if !sameJSON(sess.State, []byte(`{"i":`+string(rune('0'+i))+`}`)) {
			t.Errorf("%s: state %s", id, sess.State)
		}
	}
}

func testAgentSurvivesReopen(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	list := todos(planning.TodoCompleted, planning.TodoPending)
	must(t, b.AppendStep(ctx, "s", store.Step{First: 0, Messages: msgs("a", "b"), Todos: &list, State: json.RawMessage(`{"n":1}`)}))
	b = reopen(t)
	sess, err := b.LoadSession(ctx, "s")
	must(t, err)
	wantMessages(t, sess.Messages, msgs("a", "b"))
	wantTodos(t, sess.Todos, list)
	if !sameJSON(sess.State, []byte(`{"n":1}`)) {
		t.Errorf("state after reopen = %s", sess.State)
	}
	must(t, b.AppendStep(ctx, "s", store.Step{First: 2, Messages: msgs("c")}))
}

// testInstructionsSetting: a channel's instructions (/h9 instructions) are
// a setting of up to 4,000 characters of any text — several lines, quotes,
// non-ASCII (4,000 characters of it are up to 16,000 bytes) — kept exactly,
// per channel, beside the channel's other settings, across a reopen, and
// gone when cleared.
func testInstructionsSetting(t *testing.T, fresh Fresh) {
	b, reopen := fresh(t)
	ctx := t.Context()
	long := strings.Repeat("Ñ🚫 \"never\" touch migrations;\n", 4000/29) // 4,000 characters at most, multi-byte
	must(t, b.SetChannelSetting(ctx, "C1", "instructions", long))
	must(t, b.SetChannelSetting(ctx, "C1", "repo", "backend"))
	must(t, b.SetChannelSetting(ctx, "C2", "instructions", "payments service: ask before any schema change"))
	b = reopen(t)
	for _, c := range [][3]string{{"C1", "instructions", long}, {"C1", "repo", "backend"}, {"C2", "instructions", "payments service: ask before any schema change"}} {
		v, err := b.ChannelSetting(ctx, c[0], c[1])
		must(t, err)
		if v != c[2] {
			t.Errorf("%s %s = %d bytes, want %d bytes exactly as set", c[0], c[1], len(v), len(c[2]))
		}
	}
	must(t, b.SetChannelSetting(ctx, "C1", "instructions", ""))
	if v, err := b.ChannelSetting(ctx, "C1", "instructions"); err != nil || v != "" {
		t.Errorf("cleared instructions = %q, %v; want none", v, err)
	}
	if v, err := b.ChannelSetting(ctx, "C1", "repo"); err != nil || v != "backend" {
		t.Errorf("clearing the instructions changed the repo setting: %q, %v", v, err)
	}
}

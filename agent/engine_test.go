package agent

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

func TestNewRejectsIncompleteConfig(t *testing.T) {
	h := newHarness(t)
	full := h.cfg
	tests := []struct {
		name  string
		spoil func(*Config)
	}{
		{"no store", func(c *Config) { c.Store = nil }},
		{"no model", func(c *Config) { c.Model = nil }},
		{"no model name", func(c *Config) { c.ModelName = "" }},
		{"no workspaces", func(c *Config) { c.Workspaces = nil }},
		{"negative steps", func(c *Config) { c.MaxSteps = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := full
			tt.spoil(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if _, _, err := h.run("s", "go", RunOptions{Mode: planning.PlanMode(7)}); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("Run in mode 7 = %v, want ErrInvalidMode", err)
	}
	for _, req := range []Request{{}, {Intent: IntentTask}, {Intent: IntentReply}, {Intent: Intent(99), Text: "x"}} {
		if _, _, err := h.runRequest("s", req, RunOptions{}); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("Run(%+v) = %v, want ErrInvalidRequest", req, err)
		}
	}
	if n := h.srv.Calls(); n != 0 {
		t.Errorf("invalid runs made %d model requests", n)
	}
	if h.eng.SandboxLevel() != "none" {
		t.Errorf("sandbox level = %q", h.eng.SandboxLevel())
	}
}

// A crash right after an accepted todo_write must not lose it: the store
// already holds the list when the Todos event is emitted. The list is
// committed with the step (conversation and todos together, one commit),
// then the snapshot is emitted.
func TestTodosStoredBeforeSnapshotEvent(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(threePending...)), fakemodel.Text("ok"))
	var stored []planning.TodoItem
	var readErr error
	opts := RunOptions{Events: func(ev Event) {
		if ev.Kind == EventTodos {
			stored, readErr = h.store.Todos(t.Context(), "s") // the store, not the live list
		}
	}}
	if _, err := h.eng.Run(t.Context(), "s", task("plan"), opts); err != nil {
		t.Fatal(err)
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	if diff := cmp.Diff(threePending, stored); diff != "" {
		t.Errorf("stored at snapshot time (-want +got):\n%s", diff)
	}
}

// The todos ride on the step's one commit: when the snapshot is emitted the
// step's messages (the todo_write call and its result) are stored as well.
func TestTodosCommittedWithTheirStep(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(threePending...)), fakemodel.Text("ok"))
	var msgs int
	opts := RunOptions{Events: func(ev Event) {
		if ev.Kind == EventTodos {
			st, err := h.store.LoadSession(t.Context(), "s")
			if err != nil {
				t.Error(err)
			}
			msgs = len(st.Messages)
		}
	}}
	if _, err := h.eng.Run(t.Context(), "s", task("plan"), opts); err != nil {
		t.Fatal(err)
	}
	if msgs != 3 { // user prompt, assistant call, tool result
		t.Errorf("stored messages at snapshot time = %d, want 3", msgs)
	}
}

// A todo_write followed by another call in the same step is stored and
// shown before that call runs, so a long command does not hold the
// checklist back.
func TestTodosShownBeforeTheStepsNextCall(t *testing.T) {
	h := newHarness(t)
	items := []planning.TodoItem{todo("1", "say hi", planning.TodoInProgress)}
	h.srv.Enqueue(fakemodel.ToolCalls(
		fakemodel.C("todo_write", todoArgs(items...)),
		fakemodel.C("bash", `{"command":"echo hi"}`),
	), fakemodel.Text("ok"))
	var kinds []EventKind
	var stored []planning.TodoItem
	opts := RunOptions{Events: func(ev Event) {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == EventTodos {
			stored, _ = h.store.Todos(t.Context(), "s")
		}
	}}
	if _, err := h.eng.Run(t.Context(), "s", task("go"), opts); err != nil {
		t.Fatal(err)
	}
	want := []EventKind{EventRunStarted, EventUsage, EventToolStarted, EventToolFinished, EventTodos, EventToolStarted, EventToolFinished, EventTextDelta, EventUsage, EventDone}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(items, stored); diff != "" {
		t.Errorf("stored at snapshot time (-want +got):\n%s", diff)
	}
}

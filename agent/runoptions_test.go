package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

// RunOptions.Mode overrides the stored mode for the run, and the run stores
// it with its commits, so the caller need not SetPlanMode first.
func TestRunOptionsModeIsUsedAndStored(t *testing.T) {
	h := newHarness(t)
	plan := planning.PlanModePlan
	h.srv.Enqueue(fakemodel.ToolCall("write_file", `{"path":"x.txt","content":"x"}`), fakemodel.Text("planned"))
	if _, _, err := h.run("s", "plan it", RunOptions{Mode: &plan}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range h.srv.Requests()[0].Tools {
		if tool.Function.Name == "write_file" {
			t.Error("a plan-mode run offered write_file")
		}
	}
	if _, err := os.Stat(filepath.Join(h.wsDir("s"), "x.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran in plan mode (stat err %v)", err)
	}
	h.reopen()
	if m, err := h.eng.PlanMode("s"); err != nil || m != planning.PlanModePlan {
		t.Errorf("stored mode = %v, %v; want plan", m, err)
	}
	bad := planning.PlanMode(7)
	if _, _, err := h.run("s", "again", RunOptions{Mode: &bad}); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("invalid mode: err = %v, want ErrInvalidMode", err)
	}
}

// The gate is asked once, before the first tool call and not before the
// model request; while it blocks nothing runs, and when it fails no tool
// runs, each call is answered "not run" and the next run works.
func TestRunOptionsGate(t *testing.T) {
	h := newHarness(t)
	release := make(chan error)
	calls := 0
	gate := func() error {
		calls++
		if h.srv.Calls() != 1 {
			t.Errorf("gate asked after %d model requests, want 1 (the request must not wait for it)", h.srv.Calls())
		}
		return <-release
	}
	h.srv.Enqueue(
		fakemodel.ToolCall("write_file", `{"path":"a.txt","content":"a"}`),
		fakemodel.ToolCall("write_file", `{"path":"b.txt","content":"b"}`),
		fakemodel.Text("done"),
	)
	go func() { release <- nil }()
	if _, _, err := h.run("s", "go", RunOptions{Gate: gate}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("gate called %d times, want 1", calls)
	}

	failed := errors.New("record not stored")
	h.srv.Enqueue(fakemodel.ToolCall("write_file", `{"path":"c.txt","content":"c"}`))
	_, _, err := h.run("s2", "go", RunOptions{Gate: func() error { return failed }})
	if !errors.Is(err, failed) {
		t.Fatalf("run err = %v, want the gate's error", err)
	}
	if _, err := os.Stat(filepath.Join(h.wsDir("s2"), "c.txt")); !os.IsNotExist(err) {
		t.Errorf("a tool ran after the gate failed (stat err %v)", err)
	}
	h.srv.Enqueue(fakemodel.Text("fine now"))
	h.mustRun("s2", "again")
	msgs := h.lastRequest().Messages
	var answered bool
	for _, m := range msgs {
		if m.Role == "tool" && strings.Contains(m.Content, "not run") && strings.Contains(m.Content, "record not stored") {
			answered = true
		}
	}
	if !answered {
		t.Error("the refused call has no \"not run\" answer in the stored history")
	}
}

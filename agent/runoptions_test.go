package agent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

// RunOptions.Mode is the run's mode, whatever the session's earlier runs
// used: the caller owns the mode.
func TestRunOptionsModeIsUsed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.Text("first, executing"))
	h.mustRun("s", "start")
	h.srv.Enqueue(fakemodel.ToolCall("write_file", `{"path":"x.txt","content":"x"}`), fakemodel.Text("planned"))
	if _, _, err := h.run("s", "plan it", RunOptions{Mode: planning.PlanModePlan}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range h.srv.Requests()[1].Tools {
		if tool.Function.Name == "write_file" {
			t.Error("a plan-mode run offered write_file")
		}
	}
	if _, err := os.Stat(filepath.Join(h.wsDir("s"), "x.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran in plan mode (stat err %v)", err)
	}
	if _, _, err := h.run("s", "again", RunOptions{Mode: planning.PlanMode(7)}); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("invalid mode: err = %v, want ErrInvalidMode", err)
	}
}

// The gate is asked once, before the first model request; while it blocks
// nothing is sent, and when it fails the run stops before asking anything.
func TestRunOptionsGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	calls := 0
	gate := func() error {
		calls++
		if n := h.srv.Calls(); n != 0 {
			t.Errorf("gate asked after %d model requests, want 0", n)
		}
		return nil
	}
	h.srv.Enqueue(
		fakemodel.ToolCall("write_file", `{"path":"a.txt","content":"a"}`),
		fakemodel.ToolCall("write_file", `{"path":"b.txt","content":"b"}`),
		fakemodel.Text("done"),
	)
	if _, _, err := h.run("s", "go", RunOptions{Gate: gate}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("gate called %d times, want 1", calls)
	}

	failed := errors.New("record not stored")
	before := h.srv.Calls()
	_, _, err := h.run("s2", "go", RunOptions{Gate: func() error { return failed }})
	if !errors.Is(err, failed) {
		t.Fatalf("run err = %v, want the gate's error", err)
	}
	if n := h.srv.Calls() - before; n != 0 {
		t.Errorf("%d model requests after the gate failed, want 0", n)
	}
	h.srv.Enqueue(fakemodel.Text("fine now"))
	h.mustRun("s2", "again")
	if msgs := h.lastRequest().Messages; len(msgs) != 2 {
		t.Errorf("after a failed gate the next run sent %d messages, want the system prompt and its own prompt", len(msgs))
	}
}

package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// Prepare creates the session's workspace before any run, and the run
// that follows uses that same directory (files made in between survive).
func TestPrepareCreatesTheWorkspaceTheRunUses(t *testing.T) {
	h := newHarness(t)
	if err := h.eng.Prepare("s1"); err != nil {
		t.Fatal(err)
	}
	ws, err := h.wsm.Open("s1")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := os.WriteFile(ws.Dir()+"/kept.txt", []byte("kept"), 0o644); err != nil {
		t.Fatalf("Prepare left no workspace directory: %v", err)
	}
	h.srv.Enqueue(fakemodel.ToolCall("read_file", `{"path":"kept.txt"}`), fakemodel.Text("done"))
	h.mustRun("s1", "read it")
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(last.Content, "kept") {
		t.Errorf("read_file in the run's workspace gave %q, want the file written after Prepare", last.Content)
	}
}

package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

func TestAutoEditApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mode     planning.PlanMode
		approve  bool
		wantAsk  bool
		wantFile bool
	}{
		{"auto-edit approved", planning.PlanModeAutoEdit, true, true, true},
		{"auto-edit rejected", planning.PlanModeAutoEdit, false, true, false},
		{"default mode never asks", planning.PlanModeDefault, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.setMode("s", tt.mode)
			h.srv.Enqueue(
				fakemodel.ToolCall("write_file", `{"path":"notes.txt","content":"hello\n"}`),
				fakemodel.ToolCall("read_file", `{"path":"notes.txt"}`), // never needs approval
				fakemodel.Text("ok"),
			)
			var asked []ApprovalRequest
			approve := func(_ context.Context, req ApprovalRequest) (bool, error) {
				asked = append(asked, req)
				return tt.approve, nil
			}
			if _, _, err := h.run("s", "write notes", RunOptions{Approve: approve}); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(h.wsDir("s"), "notes.txt"))
			if exists := err == nil; exists != tt.wantFile {
				t.Errorf("file exists = %v, want %v", exists, tt.wantFile)
			}
			if !tt.wantAsk {
				if len(asked) != 0 {
					t.Errorf("asked %d times in %s mode", len(asked), tt.mode)
				}
				return
			}
			if len(asked) != 1 {
				t.Fatalf("asked %d times, want 1", len(asked))
			}
			a := asked[0]
			if a.SessionID != "s" || a.Tool != "write_file" || a.Summary != "notes.txt" || !strings.Contains(a.Preview, "+hello") {
				t.Errorf("approval request = %+v", a)
			}
			first := toolMessages(h.lastRequest())[0].Content
			if rejected := strings.Contains(first, "the user rejected this call"); rejected == tt.approve {
				t.Errorf("write result = %q (approved %v)", first, tt.approve)
			}
		})
	}
}

func TestAutoEditBashPreviewIsTheCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setMode("s", planning.PlanModeAutoEdit)
	h.srv.Enqueue(fakemodel.ToolCall("bash", `{"command":"echo hi > out.txt"}`), fakemodel.Text("ok"))
	var got ApprovalRequest
	approve := func(_ context.Context, req ApprovalRequest) (bool, error) { got = req; return false, nil }
	if _, _, err := h.run("s", "go", RunOptions{Approve: approve}); err != nil {
		t.Fatal(err)
	}
	if got.Tool != "bash" || got.Preview != "echo hi > out.txt" || got.Summary != "echo hi > out.txt" {
		t.Errorf("approval request = %+v", got)
	}
	if _, err := os.Stat(filepath.Join(h.wsDir("s"), "out.txt")); !os.IsNotExist(err) {
		t.Errorf("rejected bash ran (stat err %v)", err)
	}
}

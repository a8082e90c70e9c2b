package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	goopenai "github.com/sashabaranov/go-openai"
)

func TestPlanModeOffersWhitelistAndPrefixesPrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode      planning.PlanMode
		wantTools []string
		prefixed  bool
	}{
		{planning.PlanModePlan, []string{"bash", "read_file", "share_file", "todo_write", "use_skill"}, true},
		{planning.PlanModeDefault, []string{"bash", "edit_file", "read_file", "share_file", "todo_write", "use_skill", "write_file"}, false},
		{planning.PlanModeAutoEdit, []string{"bash", "edit_file", "read_file", "share_file", "todo_write", "use_skill", "write_file"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			h := newHarness(t)
			h.setMode("s1", tt.mode)
			h.srv.Enqueue(fakemodel.Text("the plan"))
			res, rec := h.mustRun("s1", "add a health endpoint")

			req := h.lastRequest()
			if diff := cmp.Diff(tt.wantTools, toolNames(req)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			user := req.Messages[len(req.Messages)-1]
			want := "add a health endpoint"
			if tt.prefixed {
				want = planModePrefix + want
			}
			if user.Role != goopenai.ChatMessageRoleUser || user.Content != want {
				t.Errorf("user message = %q, want %q", user.Content, want)
			}
			if !strings.Contains(req.Messages[0].Content, "Mode: "+tt.mode.String()) {
				t.Errorf("system prompt does not state the mode:\n%s", req.Messages[0].Content)
			}
			if res.Mode != tt.mode || rec.all()[0].Mode != tt.mode {
				t.Errorf("result mode %v, started event mode %v, want %v", res.Mode, rec.all()[0].Mode, tt.mode)
			}
		})
	}
}

func TestPlanModeRefusesHallucinatedTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args string
	}{
		{"write_file", "write_file", `{"path":"x.txt","content":"hi"}`},
		{"edit_file", "edit_file", `{"path":"x.txt","old_string":"a","new_string":"b"}`},
		{"mutating bash", "bash", `{"command":"touch x.txt"}`},
	}
	for _, sandbox := range []string{"none", "auto"} {
		for _, tt := range tests {
			t.Run(sandbox+"/"+tt.name, func(t *testing.T) {
				checkPlanRefusal(t, sandbox, tt.tool, tt.args)
			})
		}
	}
}

// checkPlanRefusal runs one plan-mode call that must change nothing.
func checkPlanRefusal(t *testing.T, sandbox, tool, args string) {
	h := newHarnessSandbox(t, sandbox)
	h.setMode("s", planning.PlanModePlan)
	h.srv.Enqueue(fakemodel.ToolCall(tool, args), fakemodel.Text("ok"))
	_, rec := h.mustRun("s", "plan it")

	if _, err := os.Stat(filepath.Join(h.wsDir("s"), "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("x.txt exists or stat failed (%v): plan mode changed the workspace", err)
	}
	results := toolMessages(h.lastRequest())
	// Refused by the tool filter or the read-only check ("Error: …"), or
	// failing inside bwrap's read-only mount (non-zero exit).
	if len(results) != 1 || strings.Contains(results[0].Content, "[exit code 0]") {
		t.Fatalf("tool results = %+v, want one failed call", results)
	}
	fin := rec.of(EventToolFinished)
	if len(fin) != 1 || !fin[0].IsError {
		t.Errorf("ToolFinished events = %+v, want one with IsError", fin)
	}
}

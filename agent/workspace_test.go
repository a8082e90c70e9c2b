package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/workspace"
)

// A new session's workspace is made by the first tool that needs it, not
// before its first model request; the prompt names it all along.
func TestWorkspaceMadeOnFirstUse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir, err := h.wsm.Path("s")
	if err != nil {
		t.Fatal(err)
	}
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", `{}`), fakemodel.Text("no files needed"))
	h.mustRun("s", "think")
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("a run without file tools made the workspace (lstat err %v)", err)
	}
	if sys := h.lastRequest().Messages[0].Content; !strings.Contains(sys, dir) {
		t.Errorf("system prompt does not name the workspace %s:\n%s", dir, sys)
	}

	h.srv.Enqueue(fakemodel.ToolCall("write_file", `{"path":"x.txt","content":"x"}`), fakemodel.Text("wrote"))
	h.mustRun("s", "write")
	if data, err := os.ReadFile(filepath.Join(dir, "x.txt")); err != nil || string(data) != "x" {
		t.Errorf("x.txt = %q, %v; want the file in %s", data, err, dir)
	}
}

// With a template, the workspace is made (copied) before the first request,
// since the prompt reads the template's AGENTS.md.
func TestTemplateWorkspaceMadeAtStart(t *testing.T) {
	t.Parallel()
	tmpl := t.TempDir()
	writeFile(t, filepath.Join(tmpl, "AGENTS.md"), "Use the Makefile.\n")
	wsm, err := workspace.NewManager(workspace.Config{Root: filepath.Join(t.TempDir(), "ws"), Template: tmpl, Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Workspaces = wsm })
	h.srv.Enqueue(fakemodel.Text("ok"))
	h.mustRun("s", "go")
	if sys := h.lastRequest().Messages[0].Content; !strings.Contains(sys, "Use the Makefile.") {
		t.Errorf("system prompt lacks the template's AGENTS.md:\n%s", sys)
	}
}

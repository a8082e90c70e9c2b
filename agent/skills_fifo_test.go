package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
)

// A FIFO named AGENTS.md or SKILL.md (nobody writes to it) must not block
// the run that reads it, nor any later one: it is skipped like any file
// that is not a regular file.
func TestFIFOAgentsMDAndSkillDoNotBlock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.wsDir("s")
	writeFile(t, filepath.Join(ws, ".h9", "skills", "lint", "SKILL.md"), "---\nname: lint\ndescription: Lint Go code.\n---\nRun go vet.\n")
	if err := os.MkdirAll(filepath.Join(ws, ".h9", "skills", "stuck"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(ws, "AGENTS.md"), filepath.Join(ws, ".h9", "skills", "stuck", "SKILL.md")} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		h.srv.Enqueue(fakemodel.Text("ok"))
		h.mustRun("s", "go")
	}
	sys := h.lastRequest().Messages[0].Content
	if !strings.Contains(sys, "- lint: Lint Go code.") || strings.Contains(sys, "stuck") || strings.Contains(sys, "AGENTS.md at the workspace root") {
		t.Errorf("system prompt:\n%s", sys)
	}
}

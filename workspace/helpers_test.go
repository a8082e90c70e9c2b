package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// needBwrap skips only on a developer machine without bubblewrap; in CI
// (which installs it) a missing bwrap is a failure, never a silent skip.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but bwrap is missing: %v", err)
		}
		t.Skipf("bwrap not installed: %v", err)
	}
}

func newManager(t testing.TB, sandbox string) *Manager {
	t.Helper()
	if sandbox == "bwrap" {
		needBwrap(t)
	}
	m, err := NewManager(Config{Root: filepath.Join(t.TempDir(), "workspaces"), Sandbox: sandbox})
	if err != nil {
		t.Fatalf("NewManager(%s): %v", sandbox, err)
	}
	return m
}

func openWS(t testing.TB, m *Manager, id string) *Workspace {
	t.Helper()
	w, err := m.Open(id)
	if err != nil {
		t.Fatalf("Open(%q): %v", id, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func newWS(t testing.TB, sandbox string) *Workspace {
	t.Helper()
	return openWS(t, newManager(t, sandbox), "C1-1700000000.000100")
}

func mustBash(t testing.TB, w *Workspace, cmd string, opts BashOptions) BashResult {
	t.Helper()
	r, err := w.Bash(context.Background(), cmd, opts)
	if err != nil {
		t.Fatalf("Bash(%q): %v", cmd, err)
	}
	return r
}

func writeHostFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sandboxes lists the levels to run shared tests under.
var sandboxes = []string{"none", "bwrap"}

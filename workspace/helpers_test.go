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
		t.Skipf("bwrap not installed (apt-get install bubblewrap; .ci/run installs it and runs every test): %v", err)
	}
}

func newManager(t testing.TB, sandbox string) *Manager {
	t.Helper()
	return newManagerWith(t, Config{Sandbox: sandbox})
}

// newManagerWith fills in Root (under a fresh data directory, which is
// hidden like H9_DATA_DIR) unless cfg sets it.
func newManagerWith(t testing.TB, cfg Config) *Manager {
	t.Helper()
	if cfg.Sandbox == "bwrap" {
		needBwrap(t)
	}
	if cfg.Root == "" {
		data := t.TempDir()
		cfg.Root, cfg.Hidden = filepath.Join(data, "workspaces"), append(cfg.Hidden, data)
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatalf("NewManager(%+v): %v", cfg, err)
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
var sandboxes = []string{"none", "bwrap", "landlock"}

// needLandlock fails in CI (whose kernel has it) and skips elsewhere when
// the kernel has no Landlock.
func needLandlock(t testing.TB, m *Manager) {
	t.Helper()
	if m.Enforcement().Plan == GuardLandlock {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set but plan mode is not confined by Landlock here: %+v", m.Enforcement())
	}
	t.Skipf("no Landlock here: %+v", m.Enforcement())
}

// needCgroups fails when h9 runs as root in CI (which may create cgroups)
// and skips elsewhere when there is no cgroup to use.
func needCgroups(t testing.TB, m *Manager) {
	t.Helper()
	if m.Enforcement().Cgroups != "" {
		return
	}
	if os.Getenv("CI") != "" && os.Geteuid() == 0 {
		t.Fatalf("CI runs as root but no cgroup is usable: %s", m.Enforcement().NoCgroups)
	}
	t.Skipf("no usable cgroup: %s", m.Enforcement().NoCgroups)
}

// planModes are the kernel guards plan mode is tested under.
var planModes = []string{"bwrap", "none"}

package workspace

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/h9-app/h9/workspace/netx"
	"github.com/h9-app/h9/workspace/testenv"
)

// discardPort is an open port on the host's loopback, for a probe that
// must not reach it; closed when the test ends.
func discardPort(t testing.TB) int {
	t.Helper()
	d, err := netx.ListenDiscard("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d.Addr().(*net.TCPAddr).Port
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
		testenv.Need(t, "bwrap")
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

// needCgroups skips when m has no cgroup to create a command's in, and
// fails in CI, which runs as root. testenv's "cgroups" asks for cgroup v2;
// h9 also uses the v1 memory and pids hierarchies of a hybrid host.
func needCgroups(t testing.TB, m *Manager) {
	t.Helper()
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("as nobody h9 gets no cgroup (TestUnprivilegedDegrades shows what degrades)")
	}
	testenv.Need(t, "root")
	if m.Enforcement().Cgroups != "" {
		return
	}
	if testenv.InCI() {
		t.Fatalf("CI runs as root but no cgroup is usable: %s", m.Enforcement().NoCgroups)
	}
	t.Skipf("no usable cgroup: %s", m.Enforcement().NoCgroups)
}

// planModes are the kernel guards plan mode is tested under.
var planModes = []string{"bwrap", "none"}

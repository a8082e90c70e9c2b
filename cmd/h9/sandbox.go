package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
)

const (
	bwrapHint  = "install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces (in Docker: a seccomp profile that permits them)"
	cgroupHint = "give h9 a cgroup it may manage (systemd: Delegate=yes; or run it as root) to enforce H9_SANDBOX_MEMORY and H9_SANDBOX_PIDS"
)

// checkSandbox sets the sandbox up exactly as the bot will, in a throwaway
// root with the real data directory hidden, then verifies each guarantee
// live with probe commands inside it and reports one line for each.
func checkSandbox(ctx context.Context, cfg Config) finding {
	root, err := os.MkdirTemp("", "h9-doctor-")
	if err != nil {
		return failed("check TMPDIR", "cannot create a probe directory: %v", err)
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return failed("set H9_DATA_DIR to a directory h9 may write", "cannot create %s: %v", cfg.DataDir, err)
	}
	wc := cfg.workspaceConfig(filepath.Join(root, "workspaces"))
	// No template here: the configuration check reports a bad one with the right hint.
	wc.Template = ""
	m, err := workspace.NewManager(wc)
	if err != nil {
		return failed(bwrapHint+", or run on a kernel with Landlock (H9_SANDBOX=none runs unsandboxed)", "%v", err)
	}
	f := sandboxSummary(cfg, m)
	for _, c := range m.Verify(ctx) {
		switch {
		case !c.OK && !c.Skipped:
			f.verdict, f.hint = verdictFail, "a guarantee failed: do not run h9 like this; "+bwrapHint
			f.more = append(f.more, fmt.Sprintf("✗ %s: %s", c.Name, c.Detail))
		case c.Skipped:
			f.verdict = max(f.verdict, verdictWarn)
			if f.hint == "" && strings.Contains(c.Detail, "cgroup") {
				f.hint = cgroupHint
			}
			f.more = append(f.more, fmt.Sprintf("⚠ %s: %s", c.Name, c.Detail))
		default:
			f.more = append(f.more, fmt.Sprintf("✓ %s: %s", c.Name, c.Detail))
		}
	}
	return f
}

// sandboxSummary is the first line: how bash runs and what backs it.
func sandboxSummary(cfg Config, m *workspace.Manager) finding {
	e := m.Enforcement()
	limits := "memory and process limits by " + e.Cgroups
	if e.Cgroups == "" {
		limits = "memory and process limits NOT enforced (" + e.NoCgroups + ")"
	}
	detail := fmt.Sprintf("plan mode read-only by %s; %s", e.Plan, limits)
	switch {
	case e.Level == workspace.LevelBwrap:
		return ok("bash runs under bubblewrap; %s; verified inside the sandbox:", detail)
	case e.Level == workspace.LevelLandlock:
		return warned(bwrapHint+" for namespaces (its own network, IPC, /proc and view)",
			"bash runs confined by Landlock (ABI %d): writes only to its workspace, home and /tmp; %s; verified:", e.LandlockABI, detail)
	case cfg.Sandbox == "none":
		return failed("set H9_SANDBOX=auto to use bubblewrap, or Landlock, when it works",
			"disabled by H9_SANDBOX=none: bash runs unsandboxed with h9's own rights outside plan mode; %s", detail)
	}
	return warned(bwrapHint, "UNSANDBOXED: %s; %s", m.Warning(), detail)
}

package main

import (
	"context"
	"os"

	"github.com/h9-app/h9/workspace"
)

const bwrapHint = "install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces (in Docker: a seccomp profile that permits them)"

// checkSandbox probes the configured sandbox the same way the bot will, in a throwaway root.
func checkSandbox(_ context.Context, cfg Config) finding {
	root, err := os.MkdirTemp("", "h9-doctor-")
	if err != nil {
		return failed("check TMPDIR", "cannot create a probe directory: %v", err)
	}
	defer os.RemoveAll(root)
	// No template here: the configuration check reports a bad one with the right hint.
	m, err := workspace.NewManager(workspace.Config{Root: root, Sandbox: cfg.Sandbox})
	if err != nil {
		return failed(bwrapHint+", or set H9_SANDBOX=auto to allow running unsandboxed", "%v", err)
	}
	switch {
	case m.Level() == workspace.LevelBwrap:
		return ok("bash runs under bubblewrap (read-only root, no network, private /tmp)")
	case cfg.Sandbox == "none":
		return warned("set H9_SANDBOX=auto to use bubblewrap when it works",
			"disabled by H9_SANDBOX=none: bash runs unsandboxed with h9's own rights")
	}
	return warned(bwrapHint, "UNSANDBOXED: %s", m.Warning())
}

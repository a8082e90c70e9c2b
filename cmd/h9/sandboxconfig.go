package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/h9-app/h9/workspace"
)

// workspaceConfig is the one place the sandbox settings become a
// workspace.Config: the whole data directory is hidden from commands, not
// only the workspaces (h9.db, repository caches, anything kept there).
func (c Config) workspaceConfig(root string) workspace.Config {
	return workspace.Config{
		Root:     root,
		Template: c.WorkspaceTemplate,
		Sandbox:  c.Sandbox,
		Hidden:   []string{c.DataDir},
		ROPaths:  c.SandboxROPaths,
		Limits: workspace.Limits{
			Memory: c.SandboxMemory, Pids: c.SandboxPids,
			FileSize: c.SandboxFileSize, TmpSize: c.SandboxTmpSize,
		},
	}
}

// checkROPaths catches the mistakes an operator makes; workspace.NewManager
// refuses the rest (a path inside the data directory) when h9 starts.
func checkROPaths(paths []string) error {
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
			return invalid("H9_SANDBOX_RO_PATHS: %q must be an absolute path other than /", p)
		}
		if _, err := os.Stat(p); err != nil {
			return invalid("H9_SANDBOX_RO_PATHS: %q cannot be used: %v", p, err)
		}
	}
	return nil
}

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkTemplate resolves the template directory once, at start, so a typo in
// H9_WORKSPACE_TEMPLATE fails loudly instead of on the first session.
func checkTemplate(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace template %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace template: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace template %s is not a directory", abs)
	}
	return abs, nil
}

// copyTemplate copies the template tree into dst (which must be empty),
// keeping execute bits and symlinks as they are.
func copyTemplate(template, dst string) error {
	if err := os.CopyFS(dst, os.DirFS(template)); err != nil {
		return fmt.Errorf("copying workspace template: %w", err)
	}
	return nil
}

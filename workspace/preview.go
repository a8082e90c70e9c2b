package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// PreviewWrite shows, as a capped diff, what WriteFile would change. It
// writes nothing and fails exactly where WriteFile would fail up front.
func (w *Workspace) PreviewWrite(path, content string) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	var out string
	err = w.withRoot(func(root *os.Root) error {
		old, err := readText(root, rel, path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out = unifiedDiff(path, "", content, true)
			return nil
		case errors.Is(err, ErrBinary), errors.Is(err, ErrTooLarge):
			out = fmt.Sprintf("replace %s (%v) with %d bytes of new content", path, errors.Unwrap(err), len(content))
			return nil
		case err != nil:
			return err
		}
		out = unifiedDiff(path, old, content, false)
		return nil
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return scrubSecrets(out, w.sandbox.secrets), nil // shown in the thread
}

// PreviewEdit shows, as a capped diff, what EditFile would change, with the
// same errors (not found, not unique) and without writing.
func (w *Workspace) PreviewEdit(path, oldString, newString string, replaceAll bool) (string, error) {
	rel, err := w.rel(path)
	if err != nil {
		return "", err
	}
	var out string
	err = w.withRoot(func(root *os.Root) error {
		old, err := readText(root, rel, path)
		if err != nil {
			return err
		}
		updated, _, err := applyEdit(old, oldString, newString, replaceAll, path)
		if err != nil {
			return err
		}
		out = unifiedDiff(path, old, updated, false)
		return nil
	})
	if err != nil {
		return "", w.fileErr(path, err)
	}
	return scrubSecrets(out, w.sandbox.secrets), nil // shown in the thread
}

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// rel turns a model-supplied path into a clean path relative to the
// workspace. Absolute paths are accepted only inside the workspace. This is a
// friendly first check; os.Root is what actually enforces confinement
// (symlinks included).
func (w *Workspace) rel(path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fmt.Errorf("%w: path is empty", ErrInvalidArgument)
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%w: path %q contains a NUL byte", ErrInvalidArgument, path)
	}
	clean := filepath.Clean(path)
	if filepath.IsAbs(clean) {
		r, ok := w.insideAbs(clean)
		if !ok {
			return "", outside(path, w.dir)
		}
		clean = r
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", outside(path, w.dir)
	}
	return clean, nil
}

func (w *Workspace) insideAbs(p string) (string, bool) {
	for _, base := range append([]string{w.dir}, w.aliases...) {
		if p == base {
			return ".", true
		}
		if r, ok := strings.CutPrefix(p, base+"/"); ok {
			return r, true
		}
	}
	return "", false
}

func outside(path, dir string) error {
	return fmt.Errorf("%w: %q is not inside the workspace %s; use a path relative to the workspace", ErrOutsideWorkspace, path, dir)
}

// fileErr rewrites an error from os.Root into a message for the model that
// names the path the model used.
func (w *Workspace) fileErr(path string, err error) error {
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case isOwn(err):
		return err // already a message for the model
	case isEscape(err):
		return fmt.Errorf("%w: %q resolves (through a symlink or ..) to a location outside the workspace %s", ErrOutsideWorkspace, path, w.dir)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %q does not exist in the workspace", ErrNotFound, path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", path)
	case errors.As(err, &pe):
		return fmt.Errorf("%q: %s failed: %v", path, pe.Op, pe.Err)
	default:
		return fmt.Errorf("%q: %v", path, err)
	}
}

// isEscape reports os.Root's "path escapes from parent". The sentinel is not
// exported, so the text is matched; TestEscapes pins this behaviour.
func isEscape(err error) bool {
	return strings.Contains(err.Error(), "path escapes from parent")
}

func isOwn(err error) bool {
	for _, e := range []error{ErrClosed, ErrOutsideWorkspace, ErrNotFound, ErrIsDirectory, ErrNotRegular, ErrBinary,
		ErrTooLarge, ErrNoMatch, ErrMultipleMatches, ErrInvalidArgument, ErrSharedFile} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Exists reports whether the session's workspace directory exists.
func (m *Manager) Exists(sessionID string) (bool, error) {
	dir, err := m.Path(sessionID)
	if err != nil {
		return false, err
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, fmt.Errorf("%s exists and is not a directory", dir)
	}
	return true, nil
}

// Create makes the session's workspace with fill, which gets an empty
// directory to fill (a repository checkout) before it takes the
// workspace's place. A crash or a failed fill leaves no workspace behind,
// so a later Create starts again; an existing workspace is left as it is
// (created is false). fill must not keep absolute paths of the directory
// it is given: the directory is renamed into place.
func (m *Manager) Create(sessionID string, fill func(dir string) error) (created bool, err error) {
	dir, err := m.Path(sessionID)
	if err != nil {
		return false, err
	}
	if ok, err := m.Exists(sessionID); err != nil || ok {
		return false, err
	}
	tmp, err := os.MkdirTemp(m.root, ".new-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	if err := os.Chmod(tmp, 0o755); err != nil {
		return false, err
	}
	if err := fill(tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if ok, _ := m.Exists(sessionID); ok {
			return false, nil // another Create of the session won
		}
		return false, fmt.Errorf("creating the workspace of session %q: %w", sessionID, err)
	}
	return true, nil
}

// OpenFile opens a regular file of the workspace for reading, confined to
// it (no symlink out) and never blocking on a FIFO or device.
func (w *Workspace) OpenFile(path string) (*os.File, error) {
	rel, err := w.rel(path)
	if err != nil {
		return nil, err
	}
	var f *os.File
	err = w.withRoot(func(root *os.Root) error {
		f, err = openRegular(root, rel, path)
		return err
	})
	if err != nil {
		return nil, w.fileErr(path, err)
	}
	return f, nil
}

// Remove deletes a file of the workspace (not a directory); a missing
// file is no error.
func (w *Workspace) Remove(path string) error {
	rel, err := w.rel(path)
	if err != nil {
		return err
	}
	err = w.withRoot(func(root *os.Root) error {
		fi, err := root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.IsDir():
			return fmt.Errorf("%w: %q is a directory", ErrIsDirectory, path)
		}
		return root.Remove(rel)
	})
	return w.fileErr(path, err)
}

// spareDir holds checkouts made ahead of the sessions that will take them.
const spareDir = ".spare"

// SpareDir is where a directory made ahead for key (a repository and its
// base branch) waits for a session's Create to take it: under Root, so
// hidden from every command like the workspaces, and on their file system,
// so taking it is a rename. Its parent exists; it need not.
func (m *Manager) SpareDir(key string) (string, error) {
	name, err := dirName(key)
	if err != nil {
		return "", err
	}
	parent := filepath.Join(m.root, spareDir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(parent, name), nil
}

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenSpare opens dir, a directory being made beside the spares (its
// parent is SpareDir's), as a workspace for the repository's setup
// command run ahead of any session, sandboxed exactly like a session's
// setup, with cache as its repository's cache ("" for none). Its HOME is
// a throwaway one; done closes the workspace and removes that home (a
// session that takes the spare gets its own).
func (m *Manager) OpenSpare(dir, cache string) (w *Workspace, done func(), err error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, err
	}
	if filepath.Dir(real) != filepath.Join(m.root, spareDir) {
		return nil, nil, fmt.Errorf("%w: %s is not being made as a spare", ErrInvalidArgument, dir)
	}
	home := filepath.Join(m.root, spareDir, ".home-"+filepath.Base(real))
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, nil, err
	}
	if w, err = openWorkspace(real, home, nil, m.sandbox); err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	w.cache = cache
	return w, func() { w.Close(); os.RemoveAll(home) }, nil
}

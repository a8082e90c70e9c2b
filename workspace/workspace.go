package workspace

import (
	"fmt"
	"os"
	"sync"
)

// Workspace is one session's directory. File tools go through an os.Root
// opened on it; bash runs with it as working directory (and, under bwrap,
// with it and the session's home as the only writable paths besides /tmp).
type Workspace struct {
	dir     string   // absolute, symlinks resolved; same path inside bwrap
	home    string   // the session's HOME, outside the workspace
	cache   string   // its repository's cache directory (cache.go); "" for none
	aliases []string // other absolute spellings accepted for paths
	sandbox sandbox
	session string // the session's ID, for its network route

	mu     sync.RWMutex // guards root against Close during a file operation
	root   *os.Root
	closed bool
}

func openWorkspace(dir, home string, aliases []string, sb sandbox) (*Workspace, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening workspace %s: %w", dir, err)
	}
	return &Workspace{dir: dir, home: home, aliases: aliases, sandbox: sb, root: root}, nil
}

// Dir is the workspace's absolute path (also its path inside the sandbox).
func (w *Workspace) Dir() string { return w.dir }

// Level is the sandbox bash runs under in this workspace.
func (w *Workspace) Level() Level { return w.sandbox.level }

// Close releases the directory handle. The directory itself stays.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.root.Close()
}

// withRoot runs f with the open root, or fails if the workspace is closed.
func (w *Workspace) withRoot(f func(*os.Root) error) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	return f(w.root)
}

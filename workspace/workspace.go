package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/h9-app/h9/workspace/readonly"
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

// Sentinel errors. Tool errors wrap them with the path or command involved, so
// callers can test with errors.Is while the model reads the full message.
var (
	// ErrReadOnly: plan mode refused a bash command that could change something.
	ErrReadOnly = readonly.ErrReadOnly
	// ErrOutsideWorkspace: a path (.., absolute, or through a symlink) leaves the workspace.
	ErrOutsideWorkspace = errors.New("path is outside the workspace")
	// ErrSandboxUnavailable: H9_SANDBOX=bwrap but bubblewrap cannot run here.
	ErrSandboxUnavailable = errors.New("sandbox unavailable")
	// ErrInvalidSandbox: H9_SANDBOX is not auto, bwrap or none.
	ErrInvalidSandbox = errors.New("invalid sandbox setting")
	// ErrInvalidSessionID: the session id is empty.
	ErrInvalidSessionID = errors.New("invalid session id")
	// ErrClosed: the workspace was closed.
	ErrClosed = errors.New("workspace closed")
	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("file not found")
	// ErrIsDirectory: a file tool was given a directory.
	ErrIsDirectory = errors.New("is a directory")
	// ErrNotRegular: a FIFO, socket or device, which file tools refuse
	// rather than block on.
	ErrNotRegular = errors.New("not a regular file")
	// ErrBinary: read or edit of a file that is not text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge: a file is too large to edit in memory.
	ErrTooLarge = errors.New("file too large")
	// ErrNoMatch: edit_file's old_string does not occur in the file.
	ErrNoMatch = errors.New("old_string not found")
	// ErrMultipleMatches: old_string occurs more than once and replace_all is false.
	ErrMultipleMatches = errors.New("old_string is not unique")
	// ErrSharedFile: a write in place to a file with more than one link.
	ErrSharedFile = errors.New("shared file")
	// ErrInvalidArgument: an argument is empty, negative or otherwise unusable.
	ErrInvalidArgument = errors.New("invalid argument")
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

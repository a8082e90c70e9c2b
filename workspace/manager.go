// Package workspace gives every session its own directory, confined file
// tools and a sandboxed bash. It returns errors and never logs.
package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Level is the sandbox actually in force for bash.
type Level string

const (
	LevelBwrap    Level = "bwrap"
	LevelLandlock Level = "landlock" // execution mode confined by Landlock (confine.go)
	LevelNone     Level = "none"
)

// Config configures a Manager.
type Config struct {
	Root     string // directory holding one folder per session ($H9_DATA_DIR/workspaces)
	Template string // optional directory copied into each NEW workspace (H9_WORKSPACE_TEMPLATE)
	Sandbox  string // "auto" (default when ""), "bwrap" or "landlock" (required; error if unusable), "none"
	// Hidden are existing directories a command never sees, whatever else
	// is shown: H9_DATA_DIR, with h9.db, every workspace and any cache kept
	// there. Root is always hidden; a command sees its own workspace only.
	Hidden []string
	// ROPaths are extra absolute paths shown read-only (H9_SANDBOX_RO_PATHS:
	// a shared toolchain or module cache). None may lie inside a hidden one.
	ROPaths []string
	Limits  Limits // per command; zero fields take DefaultLimits
	// Network, when set, gives execution-mode commands h9's egress proxy as
	// their only way out; it needs bwrap (network.go).
	Network Network
	// Secrets are the repositories' setup secrets: no command's output
	// shows their values.
	Secrets []Secret
}

// Manager creates and reopens per-session workspaces under one root.
type Manager struct {
	root     string   // absolute, symlinks resolved
	aliases  []string // other absolute spellings of root (as configured)
	template string
	sandbox  sandbox
	warning  string
}

// NewManager creates Root, checks Template and probes bubblewrap once
// (unless Sandbox is "none").
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Root == "" {
		return nil, fmt.Errorf("%w: workspace root is empty", ErrInvalidArgument)
	}
	abs, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", cfg.Root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("creating workspace root: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolving workspace root: %w", err)
	}
	m := &Manager{root: real}
	if abs != real {
		m.aliases = append(m.aliases, abs)
	}
	if cfg.Template != "" {
		if m.template, err = checkTemplate(cfg.Template); err != nil {
			return nil, err
		}
	}
	v, err := newView(cfg.ROPaths, append([]string{real}, cfg.Hidden...))
	if err != nil {
		return nil, err
	}
	if m.sandbox, m.warning, err = newSandbox(cfg.Sandbox, real, v, cfg.Limits.withDefaults()); err != nil {
		return nil, err
	}
	m.sandbox.secrets = sortSecrets(cfg.Secrets)
	if err := m.sandbox.useNetwork(cfg.Network); err != nil {
		return nil, err
	}
	return m, nil
}

// Level reports the sandbox bash runs under.
func (m *Manager) Level() Level { return m.sandbox.level }

// Warning is non-empty when "auto" fell back to no sandbox; it says why.
func (m *Manager) Warning() string { return m.warning }

// Enforcement says which kernel mechanisms back the sandbox here.
type Enforcement struct {
	Level       Level
	Plan        PlanGuard
	LandlockABI int    // the ABI confining plan mode; 0 under bwrap or without Landlock
	Cgroups     string // where per-command cgroups live; "" = memory and process limits not enforced
	NoCgroups   string // why there are none, when Cgroups is ""
	Limits      Limits
}

// Enforcement reports how commands are sandboxed and limited.
func (m *Manager) Enforcement() Enforcement {
	s := m.sandbox
	e := Enforcement{Level: s.level, Plan: s.planGuard(), LandlockABI: s.landlock, NoCgroups: s.cgroupWhy, Limits: s.limits}
	if s.cgroups != nil {
		e.Cgroups = s.cgroups.Driver()
	}
	return e
}

// Path is the directory of the session's workspace, whether or not it
// exists yet.
func (m *Manager) Path(sessionID string) (string, error) {
	name, err := dirName(sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(m.root, name), nil
}

// Templated reports whether new workspaces start as a copy of a template.
func (m *Manager) Templated() bool { return m.template != "" }

// Open creates (copying the template) or reopens the session's workspace.
func (m *Manager) Open(sessionID string) (*Workspace, error) {
	name, err := dirName(sessionID)
	if err != nil {
		return nil, err
	}
	dir, home := filepath.Join(m.root, name), homeDir(m.root, name)
	if err := m.ensureDir(dir); err != nil {
		return nil, fmt.Errorf("opening workspace for session %q: %w", sessionID, err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("creating the home of session %q: %w", sessionID, err)
	}
	w, err := openWorkspace(dir, home, m.aliasesFor(name), m.sandbox)
	if err != nil {
		return nil, err
	}
	w.session = sessionID
	if w.cache, err = cacheOf(m.root, name); err != nil {
		w.Close()
		return nil, fmt.Errorf("reading the cache of session %q: %w", sessionID, err)
	}
	return w, nil
}

// ensureDir creates dir if missing. With a template, the copy is built in a
// hidden temporary directory and renamed into place, so a crash never leaves
// a half-copied workspace that a later Open would take as complete.
func (m *Manager) ensureDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if m.template == "" {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	}
	tmp, err := os.MkdirTemp(m.root, ".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	// MkdirTemp makes it 0700; workspaces made without a template are 0755.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := copyTemplate(m.template, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another Open of the same session won the race: use its copy.
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return nil
		}
		return err
	}
	return nil
}

func (m *Manager) aliasesFor(name string) []string {
	out := make([]string, 0, len(m.aliases))
	for _, a := range m.aliases {
		out = append(out, filepath.Join(a, name))
	}
	return out
}

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

// maxDirName keeps directory names well under NAME_MAX (255).
const maxDirName = 120

// dirName maps a session id to a directory name that is safe and unique.
// It is an escaping, not a lossy replacement, so two ids never share a
// directory: [A-Za-z0-9.-] stay, every other byte (and '_' itself) becomes
// _XX. A leading '.' is escaped too, so "." and ".." cannot appear and the
// manager's own dot-prefixed temporary directories never collide. Very long
// ids are cut and suffixed with a hash of the whole id.
func dirName(sessionID string) (string, error) {
	if sessionID == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidSessionID)
	}
	var b strings.Builder
	for i := 0; i < len(sessionID); i++ {
		c := sessionID[i]
		if isSafeNameByte(c) && !(i == 0 && c == '.') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	name := b.String()
	if len(name) > maxDirName {
		sum := sha256.Sum256([]byte(sessionID))
		name = name[:maxDirName-33] + "~" + hex.EncodeToString(sum[:16])
	}
	return name, nil
}

func isSafeNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

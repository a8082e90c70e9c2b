// Package workspace gives every session its own directory, confined file
// tools and a sandboxed bash. It returns errors and never logs.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

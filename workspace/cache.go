package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A repository's sessions share one cache directory (the Go build and
// module caches, npm's, pip's): its first session fills it, every later
// one starts warm. It is the repository's alone — another repository's
// sessions never see it — and it is the one thing those sessions share
// writably, so one of them can leave there what a later one uses (the
// trust docs/repositories.md states). Each session's HOME stays its own.
//
// Which cache a session uses is recorded by h9 under the root, where no
// command can reach, and read when its workspace opens.

// cacheEnv are the variables pointing the tools at the cache.
var cacheEnv = []struct{ name, sub string }{
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"PIP_CACHE_DIR", "pip"},
}

func cacheRecord(root, name string) string { return filepath.Join(root, ".caches", name) }

// UseCache makes dir (absolute, created if missing, a directory h9
// keeps inside a hidden one such as H9_DATA_DIR) the cache of session
// sessionID's commands from its next Open on.
func (m *Manager) UseCache(sessionID, dir string) error {
	name, err := dirName(sessionID)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(dir) || strings.ContainsRune(dir, '\n') {
		return fmt.Errorf("%w: cache directory %q must be an absolute path", ErrInvalidArgument, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the cache %s: %w", dir, err)
	}
	rec := cacheRecord(m.root, name)
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		return err
	}
	return os.WriteFile(rec, []byte(dir+"\n"), 0o600)
}

// cacheOf is the cache recorded for a workspace, "" for none. A recorded
// path that is not a real directory (replaced, removed) is no cache.
func cacheOf(root, name string) (string, error) {
	data, err := os.ReadFile(cacheRecord(root, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(string(data))
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", nil
	}
	return dir, nil
}

// cacheVars are the cache's variables for a command's environment.
func cacheVars(dir string) []string {
	if dir == "" {
		return nil
	}
	out := make([]string, 0, len(cacheEnv))
	for _, e := range cacheEnv {
		out = append(out, e.name+"="+filepath.Join(dir, e.sub))
	}
	return out
}

// cacheBind shows the cache at its own path, writable outside plan mode.
func cacheBind(dir, bind string) []string {
	if dir == "" {
		return nil
	}
	return []string{bind, dir, dir}
}

// cacheFor is the cache a command of this sandbox uses: under bubblewrap
// (bound in) or without a sandbox (the host path itself). A confined
// mode that cannot write it gets none, so its tools use their defaults.
func (s *sandbox) cacheFor(dir string) string {
	if s.level == LevelBwrap || s.level == LevelNone {
		return dir
	}
	return ""
}

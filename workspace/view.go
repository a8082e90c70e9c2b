package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// systemDirs are shown read-only when present. Where one is a symlink
// (merged /usr: /bin -> usr/bin) the sandbox gets the same symlink.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// secretFiles are files under the system directories that a command must not
// read even as root without capabilities (root owns them): password hashes
// and host keys.
var secretFiles = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key", "/etc/security/opasswd",
}

// sysPath is one system directory as it exists on this host.
type sysPath struct {
	path string
	link string // non-empty: recreate this symlink target instead of binding
}

// view is what a sandboxed command sees of the host besides its workspace,
// its home, /tmp, /dev and /proc. It is worked out once, at start; the
// secret files in it, for every command (secrets).
type view struct {
	system  []sysPath
	roPaths []string // H9_SANDBOX_RO_PATHS, resolved
	hidden  []string // never visible: the data directory, the workspace root
}

func newView(roPaths, hidden []string) (view, error) {
	var v view
	for _, h := range hidden {
		if h == "" {
			continue
		}
		r, err := resolve(h)
		if err != nil {
			return view{}, fmt.Errorf("hidden directory %s: %w", h, err)
		}
		v.hidden = appendOutermost(v.hidden, r)
	}
	v.system = systemView()
	for _, p := range roPaths {
		r, err := v.checkROPath(p)
		if err != nil {
			return view{}, err
		}
		v.roPaths = append(v.roPaths, r)
	}
	return v, nil
}

// secrets are the secretFiles that exist now: worked out for every
// command, so a host key created after h9 started is covered too.
func secrets() []string {
	var out []string
	for _, g := range secretFiles {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	return out
}

func systemView() []sysPath {
	var out []sysPath
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			out = append(out, symlinkedDir(d))
		case fi.IsDir():
			out = append(out, sysPath{path: d})
		}
	}
	return out
}

// symlinkedDir keeps a symlink whose target is itself shown (/bin -> usr/bin);
// one pointing elsewhere is bound from its target, read-only like the rest.
func symlinkedDir(d string) sysPath {
	target, err := os.Readlink(d)
	real, rerr := filepath.EvalSymlinks(d)
	if err != nil || rerr != nil {
		return sysPath{path: d}
	}
	for _, s := range systemDirs {
		if s != d && within(real, s) {
			if fi, err := os.Lstat(s); err == nil && fi.IsDir() {
				return sysPath{path: d, link: target}
			}
		}
	}
	return sysPath{path: d}
}

// checkROPath refuses what would undo the view: relative or missing paths,
// "/", /proc, and anything inside a hidden directory.
func (v view) checkROPath(p string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: read-only path %q %s", ErrInvalidArgument, p, why)
	}
	if !filepath.IsAbs(p) {
		return "", bad("is not absolute")
	}
	r, err := resolve(p)
	if err != nil {
		return "", bad(fmt.Sprintf("cannot be used: %v", err))
	}
	switch {
	case r == "/":
		return "", bad("would show the whole host")
	case within(r, "/proc"):
		return "", bad("is under /proc, which the sandbox mounts fresh")
	}
	for _, h := range v.hidden {
		if within(r, h) {
			return "", bad(fmt.Sprintf("is inside %s, which the sandbox must not see", h))
		}
	}
	return r, nil
}

// roots are the host paths shown read-only, each an absolute resolved path.
func (v view) roots() []string {
	var out []string
	for _, s := range v.system {
		if s.link == "" {
			out = append(out, s.path)
		}
	}
	return append(out, v.roPaths...)
}

// excludedUnder lists hidden directories and secret files strictly below dir.
func (v view) excludedUnder(dir string) []string {
	var out []string
	for _, x := range append(slices.Clone(v.hidden), secrets()...) {
		if x != dir && within(x, dir) {
			out = append(out, x)
		}
	}
	return out
}

// resolve makes p absolute and resolves its symlinks.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// appendOutermost adds p unless a listed path contains it, and drops the
// listed paths p contains.
func appendOutermost(list []string, p string) []string {
	for _, q := range list {
		if within(p, q) {
			return list
		}
	}
	out := list[:0]
	for _, q := range list {
		if !within(q, p) {
			out = append(out, q)
		}
	}
	return append(out, p)
}

package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// cgroupBase is where h9 creates one cgroup per command: below its own
// cgroup, on cgroup v2 when that has the memory and pids controllers,
// otherwise on the v1 memory and pids hierarchies (hybrid hosts).
type cgroupBase struct {
	v2     string // v2 parent directory, or ""
	memory string // v1 memory parent directory, or ""
	pids   string // v1 pids parent directory, or ""
	pool   cgroupPool
}

// Driver names how the limits are enforced, for doctor and the warning.
func (b *cgroupBase) Driver() string {
	switch {
	case b == nil:
		return "none"
	case b.v2 != "":
		return "cgroup v2 " + b.v2
	}
	return "cgroup v1 " + strings.TrimSpace(b.memory+" "+b.pids)
}

// Kind is "cgroup v2" or "cgroup v1".
func (b *cgroupBase) Kind() string {
	if b != nil && b.v2 != "" {
		return "cgroup v2"
	}
	return "cgroup v1"
}

func (b *cgroupBase) enforcesMemory() bool { return b != nil && (b.v2 != "" || b.memory != "") }
func (b *cgroupBase) enforcesPids() bool   { return b != nil && (b.v2 != "" || b.pids != "") }

var (
	cgroupOnce  sync.Once
	cgroupFound *cgroupBase
	cgroupWhy   error
)

// findCgroups looks once per process for a place h9 may create cgroups in.
// The error says why there is none (no delegation, read-only cgroupfs, …).
func findCgroups() (*cgroupBase, error) {
	cgroupOnce.Do(func() { cgroupFound, cgroupWhy = detectCgroups() })
	return cgroupFound, cgroupWhy
}

func detectCgroups() (*cgroupBase, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	var whys []string
	if dir, ok := mounts["cgroup2"]; ok {
		base, err := v2Base(dir)
		if err == nil {
			b := &cgroupBase{v2: base}
			b.removeStale()
			return b, nil
		}
		whys = append(whys, err.Error())
	}
	b := &cgroupBase{}
	for _, c := range []struct {
		name string
		dst  *string
	}{{"memory", &b.memory}, {"pids", &b.pids}} {
		dir, ok := mounts[c.name]
		if !ok {
			continue
		}
		if err := probeMkdir(dir); err != nil {
			whys = append(whys, fmt.Sprintf("cgroup v1 %s: %v", c.name, err))
			continue
		}
		*c.dst = dir
	}
	if b.memory != "" || b.pids != "" {
		b.removeStale()
		return b, nil
	}
	if len(whys) == 0 {
		whys = append(whys, "no cgroup hierarchy with the memory or pids controller is mounted")
	}
	return nil, errors.New(strings.Join(whys, "; "))
}

// cgroupMounts maps "cgroup2" and each v1 controller to the directory of
// this process's own cgroup in that hierarchy.
func cgroupMounts() (map[string]string, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	paths := map[string]string{} // "cgroup2" or controller → path in the hierarchy
	for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			paths["cgroup2"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dirs := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		root, point, fstype, opts, ok := parseMountinfo(s.Text())
		if !ok || (fstype != "cgroup" && fstype != "cgroup2") {
			continue
		}
		keys := []string{"cgroup2"}
		if fstype == "cgroup" {
			keys = strings.Split(opts, ",")
		}
		for _, k := range keys {
			p, ok := paths[k]
			if !ok || !within(p, root) {
				continue
			}
			if _, seen := dirs[k]; !seen {
				dirs[k] = filepath.Join(point, strings.TrimPrefix(p, root))
			}
		}
	}
	return dirs, s.Err()
}

// parseMountinfo returns the root, mount point, type and super options of
// one /proc/self/mountinfo line.
func parseMountinfo(line string) (root, point, fstype, opts string, ok bool) {
	pre, post, found := strings.Cut(line, " - ")
	f, g := strings.Fields(pre), strings.Fields(post)
	if !found || len(f) < 5 || len(g) < 3 {
		return "", "", "", "", false
	}
	return unescapeMount(f[3]), unescapeMount(f[4]), g[0], g[2], true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// v2Base returns a v2 directory whose children get memory and pids. The
// "no internal processes" rule forbids enabling controllers for the
// children of a cgroup that has processes, so when h9 is alone in its
// cgroup (systemd's Delegate=yes) it first moves itself into a leaf.
func v2Base(own string) (string, error) {
	need := []string{"memory", "pids"}
	avail := strings.Fields(readTrim(filepath.Join(own, "cgroup.controllers")))
	for _, c := range need {
		if !slices.Contains(avail, c) {
			return "", fmt.Errorf("cgroup v2 %s: the %s controller is not available to h9's cgroup (delegate it, e.g. systemd Delegate=yes)", own, c)
		}
	}
	if hasControllers(own, need) {
		return own, probeMkdir(own)
	}
	err := enableControllers(own, need)
	if err != nil && isAlone(own) {
		leaf := filepath.Join(own, "h9.main")
		if merr := os.Mkdir(leaf, 0o755); merr == nil || errors.Is(merr, os.ErrExist) {
			if merr := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); merr == nil {
				err = enableControllers(own, need)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("cgroup v2 %s: cannot enable memory and pids for sub-cgroups: %v", own, err)
	}
	return own, probeMkdir(own)
}

func hasControllers(dir string, need []string) bool {
	on := strings.Fields(readTrim(filepath.Join(dir, "cgroup.subtree_control")))
	for _, c := range need {
		if !slices.Contains(on, c) {
			return false
		}
	}
	return true
}

func enableControllers(dir string, need []string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+strings.Join(need, " +")), 0)
}

// isAlone: the cgroup holds this process and no other.
func isAlone(dir string) bool {
	return readTrim(filepath.Join(dir, "cgroup.procs")) == strconv.Itoa(os.Getpid())
}

// probeMkdir checks that h9 may create (and remove) a cgroup below dir.
func probeMkdir(dir string) error {
	p := filepath.Join(dir, fmt.Sprintf("h9-probe-%d", os.Getpid()))
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.Remove(p)
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

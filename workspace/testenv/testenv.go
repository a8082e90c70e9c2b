// Package testenv decides, in one place, what a test does when the machine
// lacks something it needs (ARCHITECTURE.md, "Tests"): on a developer's
// machine it skips with the line that installs the missing piece; when CI is
// set (.ci/run installs everything) it fails, so CI never passes by
// skipping. Under -short (the fast tier) the tests that need the sandbox,
// PostgreSQL, the real binary or root skip whatever CI says: the full run
// is theirs.
//
// It imports only the standard library and golang.org/x/sys, so any test of
// any package may use it.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Need skips or fails t unless the machine has each of what:
//
//	"bwrap"      bubblewrap on PATH
//	"curl"       curl on PATH
//	"git"        git on PATH
//	"root"       the test runs as root (uid 0)
//	"landlock:N" the kernel's Landlock ABI is at least N
//	"postgres"   PostgreSQL's server binaries (initdb, postgres)
//	"cgroups"    a cgroup v2 hierarchy the test may write (as root)
//
// bwrap, root, landlock, postgres and cgroups belong to the full run:
// under -short they skip.
func Need(t testing.TB, what ...string) {
	t.Helper()
	for _, w := range what {
		req, ok := requirements(w)
		if !ok {
			t.Fatalf("testenv.Need: unknown requirement %q", w)
		}
		if req.full && testing.Short() {
			t.Skipf("needs %s: left to the full run (go test without -short)", w)
		}
		if why := req.missing(); why != "" {
			missing(t, w, why, req.install)
		}
	}
}

// Full skips t under -short: it is an end-to-end test (the real binary,
// a whole flow through the fakes, a benchmark's set-up) that the fast
// tier leaves to the full run. why says what makes it slow.
func Full(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: left to the full run (go test without -short)", why)
	}
}

// InCI reports whether CI is set: a missing tool fails instead of skipping.
func InCI() bool { return os.Getenv("CI") != "" }

func missing(t testing.TB, what, why, install string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI is set but %s is missing (%s): .ci/run must provide it (%s)", what, why, install)
	}
	t.Skipf("%s is missing (%s): %s; .ci/run installs it and runs every test", what, why, install)
}

type requirement struct {
	full    bool          // skipped under -short
	missing func() string // "" when present, else why not
	install string        // the line that provides it
}

func requirements(w string) (requirement, bool) {
	switch {
	case w == "bwrap":
		return requirement{full: true, missing: onPath("bwrap"), install: "apt-get install -y bubblewrap"}, true
	case w == "curl":
		return requirement{missing: onPath("curl"), install: "apt-get install -y curl"}, true
	case w == "git":
		return requirement{missing: onPath("git"), install: "apt-get install -y git"}, true
	case w == "root":
		return requirement{full: true, missing: rootMissing, install: "run the tests as root (sudo -E go test ./...)"}, true
	case w == "postgres":
		return requirement{full: true, missing: postgresMissing, install: "apt-get install -y postgresql"}, true
	case w == "cgroups":
		return requirement{full: true, missing: cgroupsMissing, install: "run as root on a machine with cgroup v2 (or systemd's Delegate=yes)"}, true
	case strings.HasPrefix(w, "landlock:"):
		n, err := strconv.Atoi(strings.TrimPrefix(w, "landlock:"))
		if err != nil || n < 1 {
			return requirement{}, false
		}
		return requirement{full: true, missing: landlockMissing(n), install: "a Linux kernel with Landlock ABI " + strconv.Itoa(n) + " or later (6.x, lsm=landlock)"}, true
	}
	return requirement{}, false
}

func onPath(name string) func() string {
	return func() string {
		if _, err := exec.LookPath(name); err != nil {
			return name + " is not on PATH"
		}
		return ""
	}
}

func rootMissing() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("running as uid %d", os.Geteuid())
	}
	return ""
}

// PostgresBin is the directory of the newest installed PostgreSQL's server
// binaries (Debian's layout, /usr/lib/postgresql/<v>/bin), or "".
func PostgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestV := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil && v > bestV {
			best, bestV = d, v
		}
	}
	if best == "" {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
	}
	return best
}

func postgresMissing() string {
	if PostgresBin() == "" {
		return "no initdb under /usr/lib/postgresql/*/bin or on PATH"
	}
	return ""
}

func cgroupsMissing() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		return "/sys/fs/cgroup is not a cgroup v2 hierarchy"
	}
	return ""
}

var landlockABI = sync.OnceValue(func() int {
	const createRulesetVersion = 1 // LANDLOCK_CREATE_RULESET_VERSION
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, createRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
})

// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func LandlockABI() int { return landlockABI() }

func landlockMissing(n int) func() string {
	return func() string {
		if got := LandlockABI(); got < n {
			return fmt.Sprintf("the kernel's Landlock ABI is %d", got)
		}
		return ""
	}
}

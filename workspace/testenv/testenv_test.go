package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// recorder is a testing.TB that remembers how a check ended instead of
// ending the test running it.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, format
	panic(r)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, format
	panic(r)
}

// check runs Need on a recorder and says how it ended.
func check(t *testing.T, what string) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Need(r, what)
	}()
	return r
}

func TestMissingToolSkipsLocallyAndFailsInCI(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on it
	t.Setenv("CI", "")
	if r := check(t, "curl"); !r.skipped || r.failed {
		t.Errorf("without CI a missing curl must skip, got %+v", r)
	}
	t.Setenv("CI", "true")
	if r := check(t, "curl"); !r.failed || r.skipped {
		t.Errorf("with CI a missing curl must fail, got %+v", r)
	}
}

func TestPresentToolPasses(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not here to be found")
	}
	if r := check(t, "git"); r.failed || r.skipped {
		t.Errorf("git is on PATH, yet Need ended the test: %+v", r)
	}
}

func TestUnknownRequirementFails(t *testing.T) {
	for _, w := range []string{"bwrp", "landlock:x", "landlock:0"} {
		if r := check(t, w); !r.failed {
			t.Errorf("Need(%q) must fail as unknown, got %+v", w, r)
		}
	}
}

func TestRootMatchesUID(t *testing.T) {
	if testing.Short() {
		if r := check(t, "root"); !r.skipped {
			t.Errorf("under -short root must skip, got %+v", r)
		}
		return
	}
	t.Setenv("CI", "")
	r := check(t, "root")
	if isRoot := os.Geteuid() == 0; isRoot == (r.skipped || r.failed) {
		t.Errorf("uid %d: Need(root) ended as %+v", os.Geteuid(), r)
	}
}

func TestLandlockAboveTheKernelIsMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("landlock checks are full-run")
	}
	t.Setenv("CI", "")
	if r := check(t, "landlock:999"); !r.skipped {
		t.Errorf("ABI 999 is beyond any kernel: want a skip, got %+v", r)
	}
}

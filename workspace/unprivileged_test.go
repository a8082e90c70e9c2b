package workspace

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// unprivilegedEnv marks the copy of this test binary that runs as nobody.
const unprivilegedEnv = "H9_TEST_UNPRIVILEGED"

// unprivilegedTests are re-run as an unprivileged user: there bwrap works
// through an unprivileged user namespace, h9 gets no cgroup, and the
// guarantees must still hold (the limits that need a cgroup degrade).
var unprivilegedTests = []string{
	"TestNoCapabilitiesInside", "TestViewShowsOnlyTheSession", "TestReapOnReturn", "TestReapOnTimeoutAndStop",
	"TestPlanModeReadOnlyByKernel", "TestLimits", "TestFileToolsRefuseSpecialFiles", "TestUnprivilegedDegrades",
}

func TestAsUnprivilegedUser(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	if os.Geteuid() != 0 {
		t.Skip("not root: the other tests already run unprivileged")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed to run the tests as nobody: %v", err)
	}
	dir, err := os.MkdirTemp("", "h9u") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "workspace.test")
	copyExecutable(t, bin)
	tmp := filepath.Join(dir, "t")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, tmp} {
		os.Chmod(p, 0o755)
	}
	os.Chown(tmp, 65534, 65534)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		bin, "-test.run", "^("+strings.Join(unprivilegedTests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "HOME=" + tmp, "CI=" + os.Getenv("CI"), unprivilegedEnv + "=1"}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("tests failed as an unprivileged user: %v", err)
	}
	for _, name := range unprivilegedTests {
		checkRanAsNobody(t, string(out), name)
	}
}

// checkRanAsNobody requires name to have passed in the run as nobody. A
// skip (no bubblewrap, no Landlock here) is reported, not failed — except
// under CI, where the inner test fails instead of skipping anyway.
func checkRanAsNobody(t *testing.T, out, name string) {
	t.Helper()
	switch {
	case strings.Contains(out, "--- PASS: "+name):
	case strings.Contains(out, "--- SKIP: "+name) && os.Getenv("CI") == "":
		t.Logf("%s skipped as nobody (its reason is in the output above)", name)
	default:
		t.Errorf("%s did not pass as nobody", name)
	}
}

// TestUnprivilegedDegrades runs only as nobody: no cgroup, so memory and
// process limits are reported as not enforced, with the reason, while
// bwrap, Landlock and the file size limit still work.
func TestUnprivilegedDegrades(t *testing.T) {
	if os.Getenv(unprivilegedEnv) != "1" {
		t.Skip("runs inside TestAsUnprivilegedUser")
	}
	e := newManager(t, "bwrap").Enforcement()
	if e.Level != LevelBwrap || e.Plan != GuardBwrap {
		t.Errorf("enforcement as nobody: %+v", e)
	}
	if e.Cgroups != "" || e.NoCgroups == "" {
		t.Errorf("nobody should get no cgroup here, and a reason: %+v", e)
	}
	if e := newManager(t, "none").Enforcement(); e.Plan != GuardLandlock && os.Getenv("CI") != "" {
		t.Errorf("plan mode as nobody without bwrap: %+v", e)
	}
}

func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/agent/store/pgtest"
)

// The real binary, built once per test run, for the behaviour only a process shows:
// exit codes, what reaches stdout and stderr, and the file lock against another process.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m) // stops the PostgreSQL server the fleet tests share
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func h9Binary(t testing.TB) string {
	t.Helper()
	testenv.Full(t, "starts the real h9 binary")
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "h9-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "h9")
		// go test puts its own GOROOT/bin first on the PATH of its tests.
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runH9 runs the binary with only the given environment (plus PATH and HOME).
func runH9(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(h9Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestBinaryHelp(t *testing.T) {
	out, errOut, code := runH9(t, nil, "-h")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	checkUsage(t, out)
}

func TestBinaryMissingToken(t *testing.T) {
	out, errOut, code := runH9(t, []string{"SLACK_APP_TOKEN=xapp-test"})
	if code != exitConfig {
		t.Errorf("exit %d, want %d", code, exitConfig)
	}
	if want := "h9: SLACK_BOT_TOKEN is required (see h9 -h)\n"; errOut != want || out != "" {
		t.Errorf("stdout %q, stderr %q; want stderr %q only", out, errOut, want)
	}
}

func TestBinaryDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := openDB(dir, dbLockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, errOut, code := runH9(t, []string{
		"SLACK_BOT_TOKEN=xoxb-test", "SLACK_APP_TOKEN=xapp-test",
		"SLACK_API_URL=http://127.0.0.1:1/api/", "OPENAI_BASE_URL=http://127.0.0.1:1/v1",
		"H9_DATA_DIR=" + dir, "H9_SANDBOX=none",
	})
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	want := "h9: another h9 is already using " + dir + " (h9.db is locked)\n"
	if !strings.HasSuffix(errOut, want) {
		t.Errorf("stderr = %q, want it to end with %q", errOut, want)
	}
}

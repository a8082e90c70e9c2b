package workspace

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/h9-app/h9/workspace/testenv"
)

// BenchmarkBashTrue is the fixed cost of one `bash -c true`, side by side:
// a bare process; today's bwrap invocation before the hardening (read-only
// root, started directly); Workspace.Bash with no sandbox (launcher, cgroup,
// reaping); the hardened bwrap sandbox; and plan mode without bwrap, which is
// Landlock alone (plus the checker and the seccomp filter); and plan mode
// under bwrap; and the Landlock execution mode.
func BenchmarkBashTrue(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unsandboxed", func(b *testing.B) {
		benchCommand(b, func() *exec.Cmd { return exec.Command(bash, "-c", "true") })
	})
	b.Run("bwrap-before", func(b *testing.B) {
		testenv.Need(b, "bwrap")
		dir := b.TempDir()
		path, _ := exec.LookPath("bwrap")
		benchCommand(b, func() *exec.Cmd { return exec.Command(path, legacyBwrapArgs(dir, bash)...) })
	})
	for _, c := range []struct {
		name, sandbox string
		plan          bool
	}{{"workspace-none", "none", false}, {"bwrap-hardened", "bwrap", false}, {"bwrap-plan", "bwrap", true}, {"landlock", "none", true}, {"landlock-exec", "landlock", false}} {
		b.Run(c.name, func(b *testing.B) {
			m := newManager(b, c.sandbox)
			if c.plan && c.sandbox == "none" && m.Enforcement().Plan != GuardLandlock {
				b.Skip("no Landlock here")
			}
			w := openWS(b, m, "bench")
			ctx := context.Background()
			start := time.Now()
			for b.Loop() {
				r, err := w.Bash(ctx, "true", BashOptions{ReadOnly: c.plan})
				if err != nil || r.ExitCode != 0 {
					b.Fatalf("%+v, %v", r, err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/cmd")
		})
	}
}

func benchCommand(b *testing.B, cmd func() *exec.Cmd) {
	start := time.Now()
	for b.Loop() {
		if out, err := cmd().CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/cmd")
}

// legacyBwrapArgs is the invocation h9 used before the hardening, kept
// here only as the benchmark's baseline.
func legacyBwrapArgs(dir, bash string) []string {
	return []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", dir, dir, "--chdir", dir, "--unshare-all", "--die-with-parent", "--new-session",
		"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", dir, "--", bash, "-c", "true"}
}

// oneMiB is 1 MiB of 64-byte lines.
var oneMiB = strings.Repeat(strings.Repeat("x", 63)+"\n", 1<<20/64)

func BenchmarkWriteFile1MiB(b *testing.B) {
	w := newWS(b, "none")
	b.SetBytes(int64(len(oneMiB)))
	for b.Loop() {
		if _, err := w.WriteFile("big.txt", oneMiB); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFile1MiB reads the whole file (limit = all 16384 lines; the
// output cap still applies, the rest of the file is scanned for the count).
func BenchmarkReadFile1MiB(b *testing.B) {
	w := newWS(b, "none")
	if _, err := w.WriteFile("big.txt", oneMiB); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(oneMiB)))
	for b.Loop() {
		if _, err := w.ReadFile("big.txt", 0, 1<<20/64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanGitStatus is `git status --short` in plan mode under
// Landlock: the price of the plan-mode git guard (plan_git.go) on a
// command that runs git.
func BenchmarkPlanGitStatus(b *testing.B) {
	m := newManager(b, "none")
	if m.Enforcement().Plan != GuardLandlock {
		b.Skip("no Landlock here")
	}
	w := openWS(b, m, "bench")
	if out, err := exec.Command("git", "init", "-q", w.Dir()).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	ctx := context.Background()
	start := time.Now()
	for b.Loop() {
		if r, err := w.Bash(ctx, "git status --short", BashOptions{ReadOnly: true}); err != nil || r.ExitCode != 0 {
			b.Fatalf("%+v, %v", r, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/cmd")
}

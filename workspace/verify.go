package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/h9-app/h9/workspace/netx"
)

// Check is one guarantee, verified live by commands inside the sandbox.
type Check struct {
	Name    string
	OK      bool
	Skipped bool   // not verified: it does not hold here by design, or cannot be checked; Detail says why
	Detail  string // what was seen
}

func passed(name, format string, a ...any) Check {
	return Check{Name: name, OK: true, Detail: fmt.Sprintf(format, a...)}
}

func failedCheck(name, format string, a ...any) Check {
	return Check{Name: name, Detail: fmt.Sprintf(format, a...)}
}

func skipped(name, format string, a ...any) Check {
	return Check{Name: name, Skipped: true, Detail: fmt.Sprintf(format, a...)}
}

// verifyTimeout bounds each probe command.
const verifyTimeout = 30 * time.Second

// Verify runs probe commands in a throwaway session, exactly as the agent's
// commands run, and reports each guarantee of ARCHITECTURE.md's "Sandbox
// guarantees": capabilities, remount, what is visible, network, h9's /proc,
// plan mode, reaping and every limit. It leaves decoy files in the hidden
// directories and the host's /tmp while it runs, and removes them after.
func (m *Manager) Verify(ctx context.Context) []Check {
	v, err := m.newVerifier()
	if err != nil {
		return []Check{failedCheck("probe", "could not set up: %v", err)}
	}
	defer v.close()
	exec := v.probe(ctx, false)
	plan := v.probe(ctx, true)
	checks := []Check{
		v.capabilities(exec, plan),
		v.remount(exec, plan),
		v.visibility(exec, plan),
		v.network(exec, plan),
		v.h9Proc(exec, plan),
		v.home(exec),
		v.planReadOnly(plan),
		v.reaping(ctx),
	}
	return append(checks, v.limits(ctx)...)
}

// verifier holds the throwaway session and the decoys the probes look for.
type verifier struct {
	m        *Manager
	ws       *Workspace
	token    string
	decoys   []string      // files that must stay invisible: in hidden directories and host /tmp
	listener *netx.Discard // an open port on the host's loopback the sandbox must not reach
}

func (m *Manager) newVerifier() (*verifier, error) {
	var b [8]byte
	rand.Read(b[:])
	v := &verifier{m: m, token: hex.EncodeToString(b[:])}
	ws, err := m.Open("h9-verify-" + v.token)
	if err != nil {
		return nil, err
	}
	v.ws = ws
	for _, dir := range append(append([]string{}, m.sandbox.view.hidden...), os.TempDir()) {
		p := filepath.Join(dir, ".h9-verify-decoy-"+v.token)
		if os.WriteFile(p, []byte("decoy\n"), 0o600) == nil {
			v.decoys = append(v.decoys, p)
		}
	}
	if v.listener, err = netx.ListenDiscard("127.0.0.1:0"); err != nil {
		v.close()
		return nil, err
	}
	return v, nil
}

func (v *verifier) close() {
	for _, d := range v.decoys {
		os.Remove(d)
	}
	if v.listener != nil {
		v.listener.Close()
	}
	v.ws.Close()
	os.RemoveAll(v.ws.dir)
	os.RemoveAll(v.ws.home)
}

// hostPaths must not be visible (or, under Landlock, readable).
var hostPaths = []string{"/root", "/home", "/run", "/var/run", "/var/lib", "/var/tmp"}

// confined: the kernel confines commands of this mode, so probes that
// would change the host if it did not are safe to run.
func (v *verifier) confined(readOnly bool) bool {
	return v.m.sandbox.level == LevelBwrap || v.m.sandbox.level == LevelLandlock || (readOnly && v.m.sandbox.landlock > 0)
}

// writeTarget is the read-only directory the probe tries to remount and write.
func (v *verifier) writeTarget(readOnly bool) string {
	if readOnly {
		return v.ws.dir
	}
	return "/usr"
}

// probeScript prints one line per fact the checks read.
func (v *verifier) probeScript(readOnly bool) string {
	var b strings.Builder
	b.WriteString("grep -E '^(CapEff|NoNewPrivs):' /proc/self/status\n")
	if target := v.writeTarget(readOnly); v.confined(readOnly) {
		fmt.Fprintf(&b, "mount -o remount,bind,rw %s >/dev/null 2>&1 && echo REMOUNTED\n", target)
		fmt.Fprintf(&b, "touch %s/.h9-verify-write-%s >/dev/null 2>&1 && echo WROTE\n", target, v.token)
		// A sysctl is host-wide: write back the value read, changing nothing.
		b.WriteString("v=$(cat /proc/sys/kernel/core_pattern) && (printf '%s\\n' \"$v\" > /proc/sys/kernel/core_pattern) >/dev/null 2>&1 && echo SYSCTL\n")
	}
	// Landlock cannot hide that a path exists (stat is not restricted),
	// only its content: reading a file or listing a directory must fail.
	for _, p := range v.decoys {
		fmt.Fprintf(&b, "cat %s >/dev/null 2>&1 && echo VISIBLE %s\n", p, p)
	}
	for _, p := range hostPaths {
		fmt.Fprintf(&b, "ls -A %s >/dev/null 2>&1 && echo VISIBLE %s\n", p, p)
	}
	fmt.Fprintf(&b, "(exec 3<>/dev/tcp/127.0.0.1/%d) >/dev/null 2>&1 && echo CONNECTED\n", v.listener.Addr().(*net.TCPAddr).Port)
	fmt.Fprintf(&b, "cat /proc/%d/environ >/dev/null 2>&1 && echo H9PROC\n", os.Getpid())
	b.WriteString("echo HOME=$HOME\n")
	return b.String()
}

// probeResult is what one probe printed, or why it did not run.
type probeResult struct {
	lines []string
	err   error
}

func (r probeResult) has(prefix string) bool {
	for _, l := range r.lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func (r probeResult) value(key string) string {
	for _, l := range r.lines {
		if v, ok := strings.CutPrefix(l, key); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// probe runs the script as the agent's bash would, but in plan mode without
// the command checker: what is verified is the kernel's part.
func (v *verifier) probe(ctx context.Context, readOnly bool) probeResult {
	r, err := v.ws.run(ctx, v.probeScript(readOnly), BashOptions{ReadOnly: readOnly, Timeout: verifyTimeout})
	if err != nil {
		return probeResult{err: err}
	}
	written := filepath.Join(v.writeTarget(readOnly), ".h9-verify-write-"+v.token)
	lines := strings.Split(r.Output, "\n")
	if _, err := os.Lstat(written); err == nil {
		os.Remove(written)
		lines = append(lines, "HOSTWRITE "+written)
	}
	return probeResult{lines: lines}
}

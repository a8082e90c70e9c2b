package workspace

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/workspace/readonly"
)

const unsandboxed = "H9_SANDBOX is off here: commands outside plan mode run with h9's own rights"

func (v *verifier) bwrap() bool { return v.m.sandbox.level == LevelBwrap }

// both applies check to the exec-mode and plan-mode probes; without bwrap
// only plan mode is confined, so only it is checked.
func (v *verifier) both(name string, exec, plan probeResult, check func(probeResult) string) Check {
	if !v.confined(false) && !v.confined(true) {
		return skipped(name, "not enforced: no bwrap and no Landlock here, so plan mode relies on the command checker alone")
	}
	results := map[string]probeResult{"plan mode": plan}
	if v.bwrap() {
		results["execution mode"] = exec
	}
	var bad []string
	for mode, r := range results {
		switch {
		case r.err != nil:
			bad = append(bad, fmt.Sprintf("%s: probe failed: %v", mode, r.err))
		default:
			if why := check(r); why != "" {
				bad = append(bad, mode+": "+why)
			}
		}
	}
	if len(bad) > 0 {
		return failedCheck(name, "%s", strings.Join(bad, "; "))
	}
	if !v.bwrap() {
		return passed(name, "in plan mode (%s)", unsandboxed)
	}
	return passed(name, "in execution and plan mode")
}

func (v *verifier) capabilities(exec, plan probeResult) Check {
	c := v.both("no capabilities, no_new_privs", exec, plan, func(r probeResult) string {
		capEff, nnp := r.value("CapEff:"), r.value("NoNewPrivs:")
		if strings.Trim(capEff, "0") != "" || nnp != "1" {
			return fmt.Sprintf("CapEff %s, NoNewPrivs %s", capEff, nnp)
		}
		return ""
	})
	if c.OK {
		c.Detail = "CapEff 0 and NoNewPrivs 1 " + c.Detail
	}
	return c
}

func (v *verifier) remount(exec, plan probeResult) Check {
	c := v.both("remount refused", exec, plan, func(r probeResult) string {
		switch {
		case r.has("HOSTWRITE"):
			return "a probe file appeared on the host"
		case r.has("REMOUNTED"):
			return "mount -o remount,rw succeeded"
		case r.has("WROTE"):
			return "a read-only directory was written"
		case r.has("SYSCTL"):
			return "a host-wide sysctl (/proc/sys/kernel/core_pattern) was written"
		}
		return ""
	})
	if c.OK {
		c.Detail = "mount -o remount,bind,rw and writes to read-only paths and /proc/sys fail " + c.Detail
	}
	return c
}

func (v *verifier) visibility(exec, plan probeResult) Check {
	c := v.both("data directory and host paths invisible", exec, plan, func(r probeResult) string {
		var seen []string
		for _, l := range r.lines {
			if p, ok := strings.CutPrefix(l, "VISIBLE "); ok {
				seen = append(seen, p)
			}
		}
		if len(seen) > 0 {
			return "visible: " + strings.Join(seen, ", ")
		}
		return ""
	})
	if c.OK {
		c.Detail = fmt.Sprintf("decoys in %s and host /tmp, and %s, cannot be read %s",
			strings.Join(v.m.sandbox.view.hidden, ", "), strings.Join(hostPaths, ", "), c.Detail)
	}
	return c
}

func (v *verifier) network(exec, plan probeResult) Check {
	if !v.bwrap() && v.m.sandbox.landlock < 4 {
		return skipped("network unreachable", "not enforced: plan mode's TCP is only denied with bwrap or Landlock ABI >= 4 (%s)", unsandboxed)
	}
	c := v.both("network unreachable", exec, plan, func(r probeResult) string {
		if r.has("CONNECTED") {
			return "connected to a listener on the host's 127.0.0.1"
		}
		return ""
	})
	if c.OK {
		c.Detail = "TCP to the host's 127.0.0.1 fails " + c.Detail
	}
	return c
}

func (v *verifier) h9Proc(exec, plan probeResult) Check {
	c := v.both("h9's /proc unreachable", exec, plan, func(r probeResult) string {
		if r.has("H9PROC") {
			return fmt.Sprintf("/proc/%d/environ was read", os.Getpid())
		}
		return ""
	})
	if c.OK {
		c.Detail = fmt.Sprintf("/proc/%d/environ cannot be read %s", os.Getpid(), c.Detail)
	}
	return c
}

func (v *verifier) home(exec probeResult) Check {
	if exec.err != nil {
		return failedCheck("HOME outside the workspace", "probe failed: %v", exec.err)
	}
	if h := exec.value("HOME="); h == "" || within(h, v.ws.dir) {
		return failedCheck("HOME outside the workspace", "HOME is %q", h)
	}
	return passed("HOME outside the workspace", "HOME is the session's own home, not the workspace")
}

func (v *verifier) planReadOnly(plan probeResult) Check {
	const name = "plan mode read-only"
	switch g := v.m.sandbox.planGuard(); {
	case g == GuardChecker:
		if readonly.Check("touch x") == nil {
			return failedCheck(name, "the command checker accepted a write")
		}
		return skipped(name, "not enforced by the kernel: no bwrap and no Landlock here, so only the command checker guards plan mode and refuses what it cannot prove read-only")
	case plan.err != nil:
		return failedCheck(name, "probe failed: %v", plan.err)
	case plan.has("WROTE") || plan.has("HOSTWRITE"):
		return failedCheck(name, "the workspace was written in plan mode")
	case g == GuardLandlock:
		return passed(name, "a write to the workspace fails under Landlock ABI %d (the command checker runs in front)", v.m.sandbox.landlock)
	}
	return passed(name, "a write to the workspace fails: bwrap binds it read-only")
}

// reaping leaves a setsid sleeper and a double-forked one behind and looks
// for them on the host after the command returned.
func (v *verifier) reaping(ctx context.Context) Check {
	const name = "every process reaped"
	mark := fmt.Sprintf("%d.%s", 86400+os.Getpid()%1000, strconv.FormatInt(time.Now().UnixNano()%1e6, 10))
	cmd := fmt.Sprintf("setsid sleep %s >/dev/null 2>&1 & (sleep %s >/dev/null 2>&1 &) ; sleep 0.2", mark, mark)
	if _, err := v.ws.run(ctx, cmd, BashOptions{Timeout: verifyTimeout}); err != nil {
		return failedCheck(name, "probe failed: %v", err)
	}
	if pid, ok := findProcess(mark); ok {
		return failedCheck(name, "process %d (sleep %s) outlived its command", pid, mark)
	}
	return passed(name, "setsid and double-forked sleepers are gone when the command returns")
}

// findProcess reports a live (non-zombie) process whose command line
// contains marker.
func findProcess(marker string) (int, bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), marker) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		return pid, true
	}
	return 0, false
}

// probeLimitTimeout ends a limit probe that is stuck at its limit.
const probeLimitTimeout = 2 * time.Second

// probeLimits are small enough to reach in a fraction of a second; the
// file size limit is above the /tmp one so that /tmp fills first.
var probeLimits = Limits{Memory: 64 << 20, Pids: 16, FileSize: 2 << 20, TmpSize: 1 << 20}

// limits runs commands that go over each limit under probeLimits and checks
// that the kernel stopped them and the result names the limit.
func (v *verifier) limits(ctx context.Context) []Check {
	small := v.m.sandbox
	small.limits = probeLimits
	type probe struct {
		name, cmd, note, how string
		applies              bool
		why                  string
	}
	cg := v.m.sandbox.cgroups
	probes := []probe{
		{"memory limit", "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo ${#x}", "H9_SANDBOX_MEMORY", cg.Kind(),
			cg.enforcesMemory(), "no cgroup with the memory controller: " + v.m.sandbox.cgroupWhy},
		// bash retries a failed fork for seconds: the probe's timeout ends it.
		{"process limit", "for i in $(seq 40); do sleep 5 & done 2>/dev/null; wait", "H9_SANDBOX_PIDS", cg.Kind(),
			cg.enforcesPids(), "no cgroup with the pids controller: " + v.m.sandbox.cgroupWhy},
		{"file size limit", "head -c 4194304 /dev/zero > big", "H9_SANDBOX_FILE_SIZE", "RLIMIT_FSIZE", true, ""},
		{"/tmp limit", "head -c 1572864 /dev/zero > /tmp/big", "H9_SANDBOX_TMP_SIZE", "tmpfs size",
			v.bwrap(), "without bwrap a command's /tmp is a directory on the host's disk"},
	}
	var out []Check
	for _, p := range probes {
		if !p.applies {
			out = append(out, skipped(p.name, "not enforced: %s", p.why))
			continue
		}
		r, err := v.ws.runUnder(ctx, small, p.cmd, BashOptions{Timeout: probeLimitTimeout})
		switch {
		case err != nil:
			out = append(out, failedCheck(p.name, "probe failed: %v", err))
		case !strings.Contains(strings.Join(r.Notes, " "), p.note):
			out = append(out, failedCheck(p.name, "going over %s was not stopped: %s", p.note, strings.TrimSpace(r.String())))
		default:
			out = append(out, passed(p.name, "a command over a small probe limit was stopped by %s and told so (%s here)", p.how, v.configured(p.note)))
		}
	}
	return out
}

// configured is the real limit, which the probe shrank.
func (v *verifier) configured(key string) string {
	l := v.m.sandbox.limits
	switch key {
	case "H9_SANDBOX_MEMORY":
		return fmt.Sprintf("%s=%s", key, l.Memory)
	case "H9_SANDBOX_PIDS":
		return fmt.Sprintf("%s=%d", key, l.Pids)
	case "H9_SANDBOX_FILE_SIZE":
		return fmt.Sprintf("%s=%s", key, l.FileSize)
	}
	return fmt.Sprintf("%s=%s", key, l.TmpSize)
}

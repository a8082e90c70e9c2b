package workspace

import (
	"context"
	"fmt"
	"strings"
	"time"
)

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

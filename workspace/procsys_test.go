package workspace

import (
	"context"
	"os"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"
)

// TestHostWideProcIsReadOnly: sysctls are host-wide. Under bwrap as root
// the sandbox's uid 0 is the host's uid 0, and bwrap leaves /proc/sys
// writable (it skips covering it because the directory itself refuses
// writes), so a command could set kernel.core_pattern to "|<a program in
// its workspace>" and have the kernel run it as host root. The test
// writes back the value it read (no change on the host) and fails if the
// write is accepted.
func TestHostWideProcIsReadOnly(t *testing.T) {
	testenv.Full(t, "runs commands in the sandbox")
	before, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		t.Skip(err)
	}
	defer func() {
		if now, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(now) != string(before) {
			os.WriteFile("/proc/sys/kernel/core_pattern", before, 0)
			t.Errorf("core_pattern changed on the host: %q", now)
		}
	}()
	for _, mode := range confinedModes {
		t.Run(modeName(mode.sandbox, mode.plan), func(t *testing.T) {
			m := newManager(t, mode.sandbox)
			if mode.sandbox == "none" {
				testenv.Need(t, "landlock:1")
			}
			w := openWS(t, m, "s")
			for _, f := range []string{"kernel/core_pattern", "fs/suid_dumpable", "kernel/randomize_va_space"} {
				cmd := `v=$(cat /proc/sys/` + f + `) && printf '%s\n' "$v" > /proc/sys/` + f + ` && echo WRITTEN`
				r, err := w.run(context.Background(), cmd, BashOptions{ReadOnly: mode.plan})
				if err != nil {
					t.Fatal(err)
				}
				if r.ExitCode == 0 {
					t.Errorf("a command wrote the host's /proc/sys/%s from inside the sandbox:\n%s", f, r.String())
				}
			}
		})
	}
}

package main

import (
	"os"
	"os/exec"
	"testing"
)

// With an allow list, doctor runs the proxy end to end inside the real
// sandbox; without one it says the agent has no network.
func TestDoctorChecksTheProxy(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skipf("bwrap not installed (apt-get install bubblewrap): %v", err)
	}
	doctorEnv(t)
	t.Setenv("H9_SANDBOX", "bwrap")
	lines, _ := doctorLines(t)
	wantMark(t, lines, "network", "✓", "no allow list")

	t.Setenv("H9_NETWORK_ALLOW", "registry.npmjs.org")
	lines, _ = doctorLines(t)
	wantMark(t, lines, "network", "✓", "reached an allowed loopback listener", "refused another", "403")
}

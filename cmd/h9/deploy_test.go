package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// deployDir holds the deployment files, from this package's directory.
const deployDir = "../../deploy"

var envLineRE = regexp.MustCompile(`^#?([A-Z][A-Z0-9_]*)=(.*)$`)

// The example env file lists every setting h9 reads, and nothing else.
func TestEnvExampleListsEverySetting(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "h9.env.example"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := envLineRE.FindStringSubmatch(line); m != nil {
			listed[m[1]] = true
		}
	}
	rows, err := settingRows(&Config{})
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, r := range rows {
		known[r.name] = true
		if !listed[r.name] {
			t.Errorf("deploy/h9.env.example lacks %s", r.name)
		}
	}
	for name := range listed {
		if !known[name] {
			t.Errorf("deploy/h9.env.example lists %s, which h9 does not read", name)
		}
	}
}

// The unit delegates a cgroup, reads the env file, and has none of the
// hardening that breaks bubblewrap's user namespace or its /proc mount.
func TestSystemdUnit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "h9.service"))
	if err != nil {
		t.Fatal(err)
	}
	unit := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			unit[k] = v
		}
	}
	for k, v := range map[string]string{"Delegate": "yes", "EnvironmentFile": "/etc/h9/h9.env", "RestartPreventExitStatus": "2"} {
		if unit[k] != v {
			t.Errorf("%s=%q, want %q", k, unit[k], v)
		}
	}
	for _, k := range []string{"ProtectKernelTunables", "ProtectKernelLogs", "ProtectProc", "RestrictNamespaces", "PrivateUsers", "SystemCallFilter", "ProtectControlGroups"} {
		if v, set := unit[k]; set {
			t.Errorf("%s=%s: it stops bubblewrap (see deploy/README.md)", k, v)
		}
	}
	verifyUnit(t, string(data))
}

// verifyUnit runs systemd-analyze verify where it exists, on the unit
// with ExecStart pointing at a real binary.
func verifyUnit(t *testing.T, unit string) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Logf("systemd-analyze not installed: the unit's syntax is not verified here")
		return
	}
	unit = regexp.MustCompile(`(?m)^ExecStart=.*$`).ReplaceAllString(unit, "ExecStart="+h9Binary(t))
	path := filepath.Join(t.TempDir(), "h9.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

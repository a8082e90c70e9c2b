package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/kelseyhightower/envconfig"
	"sigs.k8s.io/yaml"
)

// deployDir holds the deployment files, from this package's directory.
const deployDir = "../../deploy"

var envLineRE = regexp.MustCompile(`^#?([A-Z][A-Z0-9_]*)=(.*)$`)

// envExampleHeader opens deploy/h9.env.example; the rest is generated.
const envExampleHeader = `# h9's settings, one per line, for systemd's EnvironmentFile= and compose's
# env_file:. Every setting h9 reads is listed, with the meaning h9 -h gives
# (generated from the settings table: go test ./cmd/h9 -run TestEnvExample
# -update-env-example rewrites it); the commented ones show their default.
# ` + "`h9 config`" + ` prints what is in effect, ` + "`h9 doctor`" + ` checks it. Keep this file
# readable by root and h9 only: it holds the tokens (chmod 0640, owner
# root, group h9).
`

// envExampleValues are the lines the example sets rather than comments
// out: the tokens to fill in and what a service's deployment needs.
var envExampleValues = map[string]struct{ value, note string }{
	"SLACK_BOT_TOKEN": {"xoxb-REPLACE-ME", ""},
	"SLACK_APP_TOKEN": {"xapp-REPLACE-ME", ""},
	"OPENAI_API_KEY":  {"", ""},
	"H9_DATA_DIR":     {"/var/lib/h9", "(default ./h9-data; the systemd unit and the container keep state here)"},
	"H9_SANDBOX":      {"bwrap", "(default auto; a service should fail rather than run with less than bubblewrap)"},
}

var updateEnvExample = flag.Bool("update-env-example", false, "rewrite deploy/h9.env.example from the settings table")

// envExample is deploy/h9.env.example as the settings table makes it:
// each setting's meaning (its desc tag, as h9 -h prints it), then the
// setting, commented out at its default unless envExampleValues sets it.
func envExample(t *testing.T) string {
	t.Helper()
	var rows bytes.Buffer
	tmpl := "{{range .}}{{if .Alt}}{{.Alt}}{{else}}{{usage_key .}}{{end}}\t{{usage_default .}}\t{{usage_description .}}\n{{end}}"
	if err := envconfig.Usagef(envPrefix, &Config{}, &rows, tmpl); err != nil {
		t.Fatal(err)
	}
	out := envExampleHeader
	for _, line := range strings.Split(strings.TrimSpace(rows.String()), "\n") {
		name, rest, _ := strings.Cut(line, "\t")
		def, desc, _ := strings.Cut(rest, "\t")
		out += "\n# " + desc + "\n"
		if v, set := envExampleValues[name]; set {
			if v.note != "" {
				out += "# " + v.note + "\n"
			}
			out += name + "=" + v.value + "\n"
			continue
		}
		out += "#" + name + "=" + def + "\n"
	}
	return out
}

// deploy/h9.env.example is what the settings table makes: every setting
// h9 reads, nothing else, each with h9 -h's meaning (one source of truth).
func TestEnvExampleMatchesTheSettings(t *testing.T) {
	path := filepath.Join(deployDir, "h9.env.example")
	want := envExample(t)
	if *updateEnvExample {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(data)); d != "" {
		t.Errorf("deploy/h9.env.example differs from the settings table (go test ./cmd/h9 -run TestEnvExample -update-env-example rewrites it) (-want +got):\n%s", d)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := envLineRE.FindStringSubmatch(line); m != nil {
			listed[m[1]] = true
		}
	}
	for _, s := range allSettings {
		if !listed[s.name] {
			t.Errorf("deploy/h9.env.example lacks %s", s.name)
		}
	}
	for _, stale := range []string{"unsandboxed with a warning"} {
		if strings.Contains(string(data), stale) {
			t.Errorf("deploy/h9.env.example still says %q", stale)
		}
	}
}

// H9_REPOS_FILE's meaning names every key a repository may have.
func TestReposFileSettingNamesEveryKey(t *testing.T) {
	f, _ := reflect.TypeFor[Config]().FieldByName("ReposFile")
	desc := f.Tag.Get("desc")
	rt := reflect.TypeFor[gitrepo.Repo]()
	for i := range rt.NumField() {
		if k, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" && !strings.Contains(desc, k) {
			t.Errorf("H9_REPOS_FILE's description lacks the key %q: %s", k, desc)
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

// The unit's install steps, run as written (in a scratch root, without
// the owners, the user and systemctl): each one works on what the steps
// before it made, /etc/h9 included.
func TestSystemdInstallSteps(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(deployDir, "h9.service"))
	if err != nil {
		t.Fatal(err)
	}
	work, root := t.TempDir(), t.TempDir()
	for _, f := range []string{"h9.env.example", "h9.service"} {
		b, err := os.ReadFile(filepath.Join(deployDir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(work, f), b, 0o644)
	}
	os.WriteFile(filepath.Join(work, "h9"), []byte("#!/bin/sh\n"), 0o755)
	for _, d := range []string{"usr/local/bin", "etc/systemd/system"} { // on every Debian host
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ran := 0
	for _, line := range strings.Split(string(data), "\n") {
		cmdline, ok := strings.CutPrefix(line, "#   install ")
		if !ok {
			continue
		}
		cmdline, _, _ = strings.Cut(cmdline, "  #")
		var args []string
		fields := strings.Fields(cmdline)
		for i := 0; i < len(fields); i++ {
			switch f := fields[i]; {
			case f == "-o" || f == "-g":
				i++ // owners need the h9 user: not made here
			case strings.HasPrefix(f, "/"):
				args = append(args, filepath.Join(root, f))
			default:
				args = append(args, f)
			}
		}
		cmd := exec.Command("install", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("install %s: %v\n%s", cmdline, err, out)
		}
		ran++
	}
	if ran < 3 {
		t.Fatalf("found %d install steps in deploy/h9.service", ran)
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/h9/h9.env")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("/etc/h9/h9.env after the steps: %v %v", fi, err)
	}
}

// The build context leaves out history, built binaries, h9's state and
// the filled-in settings; compose runs the PostgreSQL the tests run and
// does not restart a refused setting forever.
func TestContainerFiles(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(deployDir, "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		ignored[strings.TrimSpace(l)] = true
	}
	for _, p := range []string{".git", "h9", "cmd/h9/h9", "**/h9-data", "deploy/h9.env"} {
		if !ignored[p] {
			t.Errorf(".dockerignore lacks %s", p)
		}
	}
	var compose struct {
		Services map[string]struct {
			Image   string `json:"image"`
			Restart string `json:"restart"`
		} `json:"services"`
	}
	raw, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	if img := compose.Services["postgres"].Image; !strings.HasPrefix(img, "postgres:15") {
		t.Errorf("compose runs %s; the tests run PostgreSQL 15", img)
	}
	if r := compose.Services["h9"].Restart; !regexp.MustCompile(`^on-failure:\d+$`).MatchString(r) {
		t.Errorf("h9's restart policy %q: a refused setting (exit 2) would be restarted forever", r)
	}
}

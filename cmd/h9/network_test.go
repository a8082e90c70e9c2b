package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/h9-app/h9/workspace/testenv"

	"github.com/h9-app/h9/workspace"
)

func TestNetworkConfigErrors(t *testing.T) {
	cases := []struct {
		env  []string
		want string
	}{
		{[]string{"H9_NETWORK_ALLOW", "example.com,https://x.test/"}, `H9_NETWORK_ALLOW: "https://x.test/" is not host, *.suffix, host:port or an IP address`},
		{[]string{"H9_NETWORK_ALLOW", "example.com:99999"}, `H9_NETWORK_ALLOW: "example.com:99999" is not host`},
		{[]string{"H9_NETWORK_PRESETS", "packages,everything"}, `H9_NETWORK_PRESETS: unknown preset "everything" (want one of packages)`},
	}
	for _, c := range cases {
		setEnv(t, c.env...)
		_, err := loadConfig()
		if !errors.Is(err, ErrInvalidSetting) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line starting %q", c.env, err, c.want)
		}
	}
	setEnv(t, "H9_NETWORK_ALLOW", " example.com , *.corp.test:8443,10.0.0.5", "H9_NETWORK_PRESETS", "packages")
	c, err := loadConfig()
	if err != nil || len(c.NetworkAllow) != 3 || !c.networkWanted() {
		t.Fatalf("%+v %v", c.NetworkAllow, err)
	}
}

// A repository's secret must be set, and its value is kept out of the
// logs' and the workspace's reach.
func TestRepoSecretsConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n- name: app\n  url: https://git.example.com/app.git\n  secrets: [NPM_TOKEN]\n  network: {allow: [registry.npmjs.org]}\n"), 0o644)
	setEnv(t, "H9_REPOS_FILE", file)
	t.Setenv("NPM_TOKEN", "")
	if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), "NPM_TOKEN is not set") {
		t.Errorf("unset secret: %v", err)
	}
	t.Setenv("NPM_TOKEN", "npm-secret-0123456789")
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.secretList(); len(got) != 1 || got[0] != (workspace.Secret{Name: "NPM_TOKEN", Value: "npm-secret-0123456789"}) {
		t.Errorf("secrets %+v", got)
	}
	if s, _ := secretsOf(c).scrub("token npm-secret-0123456789"); s != "token [REDACTED:NPM_TOKEN]" {
		t.Errorf("the log scrubber shows %q, want the value replaced by its name", s)
	}
	var logs strings.Builder
	newLogger(&logs, "json", "info", secretsOf(c)).Warn("setup said npm-secret-0123456789", "err", errors.New("401 for npm-secret-0123456789"))
	if out := logs.String(); strings.Contains(out, "npm-secret") || strings.Count(out, "[REDACTED:NPM_TOKEN]") != 2 {
		t.Errorf("the log line: %s", out)
	}
	// A short secret is scrubbed from logs too, as from command output.
	t.Setenv("NPM_TOKEN", "pin42")
	if c, err = loadConfig(); err != nil {
		t.Fatal(err)
	}
	if s, _ := secretsOf(c).scrub("pin is pin42"); s != "pin is [REDACTED:NPM_TOKEN]" {
		t.Errorf("a short setup secret in a log line: %q", s)
	}
	if names := repoSecretNames(); len(names) != 1 || names[0] != "NPM_TOKEN" {
		t.Errorf("names hidden at start: %q", names)
	}
}

// Without bubblewrap an allow list stops h9 with one line saying why.
func TestAllowListNeedsBubblewrap(t *testing.T) {
	setEnv(t, "H9_NETWORK_ALLOW", "example.com", "H9_SANDBOX", "none", "H9_DATA_DIR", t.TempDir())
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.startNetwork(nil, slog.New(slog.DiscardHandler))
	if err != nil || n.gateway == nil {
		t.Fatalf("%v", err)
	}
	defer n.close()
	_, err = workspace.NewManager(n.into(c.workspaceConfig(filepath.Join(c.DataDir, workspacesDir)), c))
	if err == nil || !strings.Contains(err.Error(), "needs the bubblewrap sandbox") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v", err)
	}
}

// With an allow list, doctor runs the proxy end to end inside the real
// sandbox; without one it says the agent has no network.
func TestDoctorChecksTheProxy(t *testing.T) {
	testenv.Need(t, "bwrap")
	doctorEnv(t)
	t.Setenv("H9_SANDBOX", "bwrap")
	lines, _ := doctorLines(t)
	wantMark(t, lines, "network", "✓", "no allow list")

	t.Setenv("H9_NETWORK_ALLOW", "registry.npmjs.org")
	lines, _ = doctorLines(t)
	wantMark(t, lines, "network", "✓", "reached an allowed loopback listener", "refused another", "403")
}

// A URL in a repository's network allow list gets the fix in words, not
// a port parser's complaint.
func TestRepoAllowEntryAsURL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "repos.yml")
	os.WriteFile(file, []byte("repos:\n- name: app\n  url: https://git.example.com/app.git\n  network: {allow: [\"https://registry.npmjs.org/\"]}\n"), 0o644)
	setEnv(t, "H9_REPOS_FILE", file)
	_, err := loadConfig()
	if !errors.Is(err, ErrInvalidSetting) || !strings.Contains(err.Error(), `repository "app": network: "https://registry.npmjs.org/": write host:port, not a URL`) {
		t.Errorf("start-up error: %v", err)
	}
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

// h9 config shows every setting's value in effect and never a secret.
func TestConfigPrintsSettingsInEffect(t *testing.T) {
	clearEnv(t)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bot-secret")
	t.Setenv("SLACK_APP_TOKEN", "xapp-app-secret")
	t.Setenv("OPENAI_API_KEY", "sk-model-secret")
	t.Setenv("H9_GITHUB_TOKEN", "ghp_github_secret")
	t.Setenv("H9_DATABASE_URL", "postgres://h9:db-secret@db.internal:5432/h9")
	t.Setenv("H9_MAX_STEPS", "7")
	var out, errOut bytes.Buffer
	if code := realMain([]string{"config"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	for _, secret := range []string{"bot-secret", "app-secret", "model-secret", "github_secret", "db-secret"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("h9 config shows a secret (%s):\n%s", secret, out.String())
		}
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	want := map[string]string{
		"H9_MAX_STEPS": "50 7", "H9_MODEL": "gpt-4.1 gpt-4.1", "H9_MODEL_TIMEOUT": "2m 2m0s",
		"SLACK_BOT_TOKEN": "(required) [REDACTED]", "H9_DATABASE_URL": "(empty) postgres://h9:[REDACTED]@db.internal:5432/h9",
		"H9_SKILLS_DIR": "(empty) (empty)",
	}
	for k, v := range want {
		if rows[k] != v {
			t.Errorf("%s = %q, want %q", k, rows[k], v)
		}
	}
	for _, s := range allSettings {
		if _, ok := rows[s.name]; !ok {
			t.Errorf("h9 config lacks %s", s.name)
		}
	}
}

// An invalid configuration is still printed, then h9's refusal follows
// on stderr; h9 config is a report and exits 0 (doctor is the check).
func TestConfigInvalidStillPrints(t *testing.T) {
	clearEnv(t)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-t")
	t.Setenv("SLACK_APP_TOKEN", "xapp-t")
	t.Setenv("H9_ADMINS", "alice@acme.com")
	var out, errOut bytes.Buffer
	if code := realMain([]string{"config"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, want %d", code, exitOK)
	}
	if !strings.Contains(out.String(), "alice@acme.com") || !strings.Contains(errOut.String(), "H9_ADMINS") {
		t.Errorf("stdout:\n%s\nstderr: %s", out.String(), errOut.String())
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain([]string{"version"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "h9 ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("version line %q", out.String())
	}
}

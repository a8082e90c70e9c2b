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
// on stderr and h9 config exits 2, as h9 itself would; a missing token
// is refused the same way as an invalid value.
func TestConfigInvalidStillPrints(t *testing.T) {
	for _, tc := range []struct {
		name, shown, refused string
		env                  []string
	}{
		{"invalid value", "alice@acme.com", "H9_ADMINS", []string{"SLACK_BOT_TOKEN", "xoxb-t", "SLACK_APP_TOKEN", "xapp-t", "H9_ADMINS", "alice@acme.com"}},
		{"missing token", "xapp-t", "SLACK_BOT_TOKEN is required", []string{"SLACK_APP_TOKEN", "xapp-t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for i := 0; i < len(tc.env); i += 2 {
				t.Setenv(tc.env[i], tc.env[i+1])
			}
			var out, errOut bytes.Buffer
			if code := realMain([]string{"config"}, &out, &errOut); code != exitConfig {
				t.Fatalf("exit %d, want %d", code, exitConfig)
			}
			if !strings.Contains(out.String(), "H9_MAX_STEPS") || !strings.Contains(errOut.String(), tc.refused) ||
				!strings.Contains(errOut.String(), "would refuse to start") {
				t.Errorf("stdout:\n%s\nstderr: %s", out.String(), errOut.String())
			}
		})
	}
}

// A secret shorter than the scrubber's minimum is still redacted: h9
// config knows which settings are secrets.
func TestConfigRedactsShortSecrets(t *testing.T) {
	clearEnv(t)
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-1")
	t.Setenv("SLACK_APP_TOKEN", "xapp-2")
	t.Setenv("OPENAI_API_KEY", "hunter2")
	t.Setenv("H9_GITLAB_TOKEN", "glp")
	var out, errOut bytes.Buffer
	if code := realMain([]string{"config"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	for _, secret := range []string{"hunter2", "xoxb-1", "xapp-2", " glp"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("h9 config shows the short secret %q:\n%s", secret, out.String())
		}
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

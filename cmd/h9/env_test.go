package main

import (
	"os"
	"testing"
)

// setting is one row of the configuration table in docs/configuration.md.
type setting struct{ name, def string }

// allSettings is the spec `h9 -h` must match: every variable with its default ("" = none).
var allSettings = []setting{
	{"SLACK_BOT_TOKEN", ""},
	{"SLACK_APP_TOKEN", ""},
	{"SLACK_API_URL", "https://slack.com/api/"},
	{"OPENAI_BASE_URL", "https://api.openai.com/v1"},
	{"OPENAI_API_KEY", ""},
	{"H9_MODEL", "gpt-4.1"},
	{"H9_DATA_DIR", "./h9-data"},
	{"H9_SANDBOX", "auto"},
	{"H9_SANDBOX_RO_PATHS", ""},
	{"H9_SANDBOX_MEMORY", "4GiB"},
	{"H9_SANDBOX_PIDS", "1024"},
	{"H9_SANDBOX_FILE_SIZE", "1GiB"},
	{"H9_SANDBOX_TMP_SIZE", "1GiB"},
	{"H9_WORKSPACE_TEMPLATE", ""},
	{"H9_SKILLS_DIR", ""},
	{"H9_ALLOWED_USERS", ""},
	{"H9_ALLOWED_CHANNELS", ""},
	{"H9_ADMINS", ""},
	{"H9_MAX_STEPS", "50"},
	{"H9_CONTEXT_WINDOW", "128000"},
	{"H9_MODEL_STREAM", "true"},
	{"H9_MODEL_TIMEOUT", "2m"},
	{"H9_MODEL_RETRIES", "4"},
	{"H9_COALESCE_INTERVAL", "1s"},
	{"H9_MAX_CONCURRENT_RUNS", "0"},
	{"H9_SESSION_TOKEN_BUDGET", "0"},
	{"H9_PRICE_INPUT", "0"},
	{"H9_PRICE_OUTPUT", "0"},
	{"H9_REPOS", ""},
	{"H9_REPOS_FILE", ""},
	{"H9_GITHUB_TOKEN", ""},
	{"H9_GITHUB_API_URL", "https://api.github.com/"},
	{"H9_GITLAB_TOKEN", ""},
	{"H9_GITLAB_API_URL", "https://gitlab.com/api/v4/"},
	{"H9_GITEA_TOKEN", ""},
	{"H9_GIT_NAME", "h9"},
	{"H9_GIT_EMAIL", "h9@localhost"},
	{"H9_LOG_FORMAT", "text"},
	{"H9_LOG_LEVEL", "info"},
	{"H9_HTTP_ADDR", ""},
	{"H9_NETWORK_ALLOW", ""},
	{"H9_NETWORK_PRESETS", ""},
	{"H9_DATABASE_URL", ""},
	{"H9_ATTACHMENT_MAX", "20MiB"},
	{"H9_MODEL_VISION", "auto"},
	{"H9_FORGE_POLL", "60s"},
	{"H9_FORGE_FOLLOW_FOR", "720h"},
	{"H9_AUTOMATIONS_FILE", ""},
	{"H9_AUTOMATION_MIN_INTERVAL", "1h"},
	{"H9_AUTOMATION_REFRESH", "10m"},
	{"H9_MCP_FILE", ""},
	{"H9_MCP_TIMEOUT", "60s"},
	{"H9_LEASE_TTL", "15s"},
}

const (
	testBotToken = "xoxb-test"
	testAppToken = "xapp-test"
)

// clearEnv unsets every variable h9 reads (both spellings), restored when the test ends.
func clearEnv(t testing.TB) {
	t.Helper()
	for _, s := range allSettings {
		for _, name := range []string{s.name, "H9_" + s.name} {
			t.Setenv(name, "") // registers the restore
			unsetenv(name)
		}
	}
}

// setEnv starts from a clean environment with both tokens set, then applies kv pairs.
func setEnv(t testing.TB, kv ...string) {
	t.Helper()
	clearEnv(t)
	t.Setenv("SLACK_BOT_TOKEN", testBotToken)
	t.Setenv("SLACK_APP_TOKEN", testAppToken)
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

func unsetenv(k string) {
	if err := os.Unsetenv(k); err != nil {
		panic(err)
	}
}

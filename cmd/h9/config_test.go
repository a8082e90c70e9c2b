package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
)

func TestConfigDefaults(t *testing.T) {
	setEnv(t)
	got, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		SlackBotToken:    testBotToken,
		SlackAppToken:    testAppToken,
		SlackAPIURL:      "https://slack.com/api/",
		OpenAIBaseURL:    "https://api.openai.com/v1",
		Model:            "gpt-4.1",
		DataDir:          "./h9-data",
		Sandbox:          "auto",
		SandboxMemory:    4 << 30,
		SandboxPids:      1024,
		SandboxFileSize:  1 << 30,
		SandboxTmpSize:   1 << 30,
		MaxSteps:         50,
		ContextWindow:    128000,
		ModelStream:      true,
		ModelTimeout:     2 * time.Minute,
		ModelRetries:     4,
		CoalesceInterval: time.Second,
		GithubAPIUrl:     "https://api.github.com/",
		GitlabAPIUrl:     "https://gitlab.com/api/v4/",
		GitName:          "h9",
		GitEmail:         "h9@localhost",
		LogFormat:        "text",
		LogLevel:         "info",
		LeaseTTL:         15 * time.Second,
		FilesConfig:      FilesConfig{AttachmentMax: 20 << 20, ModelVision: "auto"},
		FollowConfig:     FollowConfig{ForgePoll: time.Minute, ForgeFollowFor: 720 * time.Hour},
		AutomationConfig: AutomationConfig{AutomationMinInterval: time.Hour, AutomationRefresh: 10 * time.Minute},
		MCPTimeout:       time.Minute,
		repos:            []gitrepo.Repo{},
		forgeTokens:      map[string]string{"H9_GITHUB_TOKEN": ""},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(Config{})); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

func TestConfigNames(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		get  func(Config) any
		want any
	}{
		{"unprefixed Slack URL", []string{"SLACK_API_URL", "http://x/api/"}, func(c Config) any { return c.SlackAPIURL }, "http://x/api/"},
		{"prefixed Slack URL", []string{"H9_SLACK_API_URL", "http://y/api/"}, func(c Config) any { return c.SlackAPIURL }, "http://y/api/"},
		{"prefixed wins", []string{"SLACK_API_URL", "http://x/api/", "H9_SLACK_API_URL", "http://y/api/"}, func(c Config) any { return c.SlackAPIURL }, "http://y/api/"},
		{"prefixed bot token", []string{"H9_SLACK_BOT_TOKEN", "xoxb-other"}, func(c Config) any { return c.SlackBotToken }, "xoxb-other"},
		{"OpenAI key", []string{"OPENAI_API_KEY", "sk-123"}, func(c Config) any { return c.OpenAIAPIKey }, "sk-123"},
		{"OpenAI URL", []string{"OPENAI_BASE_URL", "http://localhost:11434/v1"}, func(c Config) any { return c.OpenAIBaseURL }, "http://localhost:11434/v1"},
		{"model", []string{"H9_MODEL", "llama3"}, func(c Config) any { return c.Model }, "llama3"},
		{"model is not read unprefixed", []string{"MODEL", "llama3"}, func(c Config) any { return c.Model }, "gpt-4.1"},
		{"data dir", []string{"H9_DATA_DIR", "/var/lib/h9"}, func(c Config) any { return c.DataDir }, "/var/lib/h9"},
		{"sandbox case", []string{"H9_SANDBOX", "BWRAP"}, func(c Config) any { return c.Sandbox }, "bwrap"},
		{"empty sandbox is auto", []string{"H9_SANDBOX", ""}, func(c Config) any { return c.Sandbox }, "auto"},
		{"sandbox memory", []string{"H9_SANDBOX_MEMORY", "512MiB"}, func(c Config) any { return c.SandboxMemory }, workspace.Size(512 << 20)},
		{"sandbox pids", []string{"H9_SANDBOX_PIDS", "64"}, func(c Config) any { return c.SandboxPids }, 64},
		{"sandbox file size", []string{"H9_SANDBOX_FILE_SIZE", "2G"}, func(c Config) any { return c.SandboxFileSize }, workspace.Size(2 << 30)},
		{"sandbox tmp size", []string{"H9_SANDBOX_TMP_SIZE", "64MiB"}, func(c Config) any { return c.SandboxTmpSize }, workspace.Size(64 << 20)},
		{"sandbox ro paths", []string{"H9_SANDBOX_RO_PATHS", "/usr, /etc,"}, func(c Config) any { return c.SandboxROPaths }, []string{"/usr", "/etc"}},
		{"sandbox memory is not read unprefixed", []string{"SANDBOX_MEMORY", "1MiB"}, func(c Config) any { return c.SandboxMemory }, workspace.Size(4 << 30)},
		{"lists", []string{"H9_ALLOWED_USERS", "U1, U2,,"}, func(c Config) any { return c.AllowedUsers }, []string{"U1", "U2"}},
		{"channels", []string{"H9_ALLOWED_CHANNELS", "C1"}, func(c Config) any { return c.AllowedChannels }, []string{"C1"}},
		{"admins", []string{"H9_ADMINS", "UA"}, func(c Config) any { return c.Admins }, []string{"UA"}},
		{"max steps", []string{"H9_MAX_STEPS", "7"}, func(c Config) any { return c.MaxSteps }, 7},
		{"timeout", []string{"H9_MODEL_TIMEOUT", "90s"}, func(c Config) any { return c.ModelTimeout }, 90 * time.Second},
		{"plain requests", []string{"H9_MODEL_STREAM", "false"}, func(c Config) any { return c.ModelStream }, false},
		{"Azure deployment URL", []string{"OPENAI_BASE_URL", "https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21"}, func(c Config) any { return c.OpenAIBaseURL }, "https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21"},
		{"coalesce zero", []string{"H9_COALESCE_INTERVAL", "0s"}, func(c Config) any { return c.CoalesceInterval }, time.Duration(0)},
		{"json logs", []string{"H9_LOG_FORMAT", "JSON"}, func(c Config) any { return c.LogFormat }, "json"},
		{"HTTP on every interface", []string{"H9_HTTP_ADDR", ":9090"}, func(c Config) any { return c.HTTPAddr }, ":9090"},
		{"HTTP on IPv6 loopback", []string{"H9_HTTP_ADDR", "[::1]:9090"}, func(c Config) any { return c.HTTPAddr }, "[::1]:9090"},
		{"HTTP on a free port", []string{"H9_HTTP_ADDR", "localhost:0"}, func(c Config) any { return c.HTTPAddr }, "localhost:0"},
		{"database URL", []string{"H9_DATABASE_URL", "postgres://h9:pw@db:5432/h9"}, func(c Config) any { return c.DatabaseURL }, "postgres://h9:pw@db:5432/h9"},
		{"lease TTL", []string{"H9_LEASE_TTL", "3s"}, func(c Config) any { return c.LeaseTTL }, 3 * time.Second},
		{"database DSN", []string{"H9_DATABASE_URL", "host=db user=h9 dbname=h9"}, func(c Config) any { return c.DatabaseURL }, "host=db user=h9 dbname=h9"},
		{"token budget", []string{"H9_SESSION_TOKEN_BUDGET", "200000"}, func(c Config) any { return c.SessionTokenBudget }, 200000},
		{"prices", []string{"H9_PRICE_INPUT", "2", "H9_PRICE_OUTPUT", "8.5"}, func(c Config) any { return [2]float64{c.PriceInput, c.PriceOutput} }, [2]float64{2, 8.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env...)
			c, err := loadConfig()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, tt.get(c)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// configErrors are settings h9 refuses, each with its one-line message.
var configErrors = []struct {
	name string
	env  []string // applied after setEnv; "" values are set as empty
	drop []string // unset after that
	kind error
	want string // the whole one-line message
}{
	{"bot token missing", nil, []string{"SLACK_BOT_TOKEN"}, ErrMissingSetting, "SLACK_BOT_TOKEN is required"},
	{"app token missing", nil, []string{"SLACK_APP_TOKEN"}, ErrMissingSetting, "SLACK_APP_TOKEN is required"},
	{"both missing names the first", nil, []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"}, ErrMissingSetting, "SLACK_BOT_TOKEN is required"},
	{"bot token empty", []string{"SLACK_BOT_TOKEN", ""}, nil, ErrMissingSetting, "SLACK_BOT_TOKEN is required"},
	{"tokens swapped", []string{"SLACK_BOT_TOKEN", "xapp-1", "SLACK_APP_TOKEN", "xoxb-1"}, nil, ErrInvalidSetting,
		"SLACK_BOT_TOKEN holds an app-level token (xapp-…, Basic Information → App-Level Tokens, with connections:write); h9 needs the Bot User OAuth Token (xoxb-…, OAuth & Permissions) there"},
	{"user token as the bot's", []string{"SLACK_BOT_TOKEN", "xoxp-1"}, nil, ErrInvalidSetting,
		"SLACK_BOT_TOKEN holds a user token (xoxp-…); h9 needs the Bot User OAuth Token (xoxb-…, OAuth & Permissions) there"},
	{"app token not xapp", []string{"SLACK_APP_TOKEN", "1234"}, nil, ErrInvalidSetting,
		"SLACK_APP_TOKEN is not an app-level token (xapp-…, Basic Information → App-Level Tokens, with connections:write): it does not start with xapp-"},
	{"quoted token", []string{"SLACK_BOT_TOKEN", `"xoxb-1"`}, nil, ErrInvalidSetting,
		"SLACK_BOT_TOKEN is wrapped in quotes: remove them (an env file passes them on as part of the value)"},
	{"token with a trailing space", []string{"SLACK_BOT_TOKEN", "xoxb-1 "}, nil, ErrInvalidSetting,
		"SLACK_BOT_TOKEN has a space or line break at its start or end (a copy-paste slip?): remove it"},
	{"key with a trailing line break", []string{"OPENAI_API_KEY", "sk-1\n"}, nil, ErrInvalidSetting,
		"OPENAI_API_KEY has a space or line break at its start or end (a copy-paste slip?): remove it"},
	{"model URL is the chat endpoint", []string{"OPENAI_BASE_URL", "https://api.openai.com/v1/chat/completions"}, nil, ErrInvalidSetting,
		"OPENAI_BASE_URL is the chat endpoint, not the API base: drop /chat/completions (e.g. https://api.openai.com/v1)"},
	{"network allow entry as a URL", []string{"H9_NETWORK_ALLOW", "https://registry.npmjs.org/"}, nil, ErrInvalidSetting,
		`H9_NETWORK_ALLOW: "https://registry.npmjs.org/" is not host, *.suffix, host:port or an IP address: write host:port, not a URL (registry.npmjs.org rather than https://…)`},
	{"repository path missing", []string{"H9_REPOS", "app=/no/such/repo"}, nil, ErrInvalidSetting,
		`repository "app": /no/such/repo does not exist (H9_REPOS or H9_REPOS_FILE): fix the path, or give a URL git can clone`},
	{"API URL without slash", []string{"SLACK_API_URL", "https://slack.com/api"}, nil, ErrInvalidSetting, `SLACK_API_URL must end in / (got "https://slack.com/api")`},
	{"API URL not a URL", []string{"SLACK_API_URL", "slack.com/api/"}, nil, ErrInvalidSetting, `SLACK_API_URL must be an http(s) URL (got "slack.com/api/")`},
	{"OpenAI URL not a URL", []string{"OPENAI_BASE_URL", "localhost:8080"}, nil, ErrInvalidSetting, `OPENAI_BASE_URL must be an http(s) URL (got "localhost:8080")`},
	{"bad sandbox", []string{"H9_SANDBOX", "docker"}, nil, ErrInvalidSetting, `H9_SANDBOX must be one of auto, bwrap, landlock, none (got "docker")`},
	{"bad memory", []string{"H9_SANDBOX_MEMORY", "lots"}, nil, ErrInvalidSetting, `H9_SANDBOX_MEMORY="lots" is not a valid size (e.g. 4GiB, 512MiB)`},
	{"zero file size", []string{"H9_SANDBOX_FILE_SIZE", "0"}, nil, ErrInvalidSetting, `H9_SANDBOX_FILE_SIZE="0" is not a valid size (e.g. 4GiB, 512MiB)`},
	{"zero pids", []string{"H9_SANDBOX_PIDS", "0"}, nil, ErrInvalidSetting, `H9_SANDBOX_PIDS must be greater than 0 (got 0)`},
	{"relative ro path", []string{"H9_SANDBOX_RO_PATHS", "opt/go"}, nil, ErrInvalidSetting, `H9_SANDBOX_RO_PATHS: "opt/go" must be an absolute path other than /`},
	{"missing ro path", []string{"H9_SANDBOX_RO_PATHS", "/no/such/dir"}, nil, ErrInvalidSetting, `H9_SANDBOX_RO_PATHS: "/no/such/dir" cannot be used: stat /no/such/dir: no such file or directory`},
	{"bad log format", []string{"H9_LOG_FORMAT", "xml"}, nil, ErrInvalidSetting, `H9_LOG_FORMAT must be one of text, json (got "xml")`},
	{"bad log level", []string{"H9_LOG_LEVEL", "loud"}, nil, ErrInvalidSetting, `H9_LOG_LEVEL must be one of debug, info, warn, error (got "loud")`},
	{"max steps not a number", []string{"H9_MAX_STEPS", "many"}, nil, ErrInvalidSetting, `H9_MAX_STEPS="many" is not a valid whole number`},
	{"max steps zero", []string{"H9_MAX_STEPS", "0"}, nil, ErrInvalidSetting, `H9_MAX_STEPS must be greater than 0 (got 0)`},
	{"timeout not a duration", []string{"H9_MODEL_TIMEOUT", "2"}, nil, ErrInvalidSetting, `H9_MODEL_TIMEOUT="2" is not a valid duration (e.g. 90s, 2m)`},
	{"stream not a boolean", []string{"H9_MODEL_STREAM", "sometimes"}, nil, ErrInvalidSetting, `H9_MODEL_STREAM="sometimes" is not a valid boolean (true or false)`},
	{"Azure deployment without api-version", []string{"OPENAI_BASE_URL", "https://r.openai.azure.com/openai/deployments/gpt4o"}, nil, ErrInvalidSetting,
		`OPENAI_BASE_URL: "https://r.openai.azure.com/openai/deployments/gpt4o" is an Azure deployment URL without ?api-version=… (e.g. ?api-version=2024-10-21)`},
	{"empty model", []string{"H9_MODEL", " "}, nil, ErrInvalidSetting, `H9_MODEL must not be empty`},
	{"empty data dir", []string{"H9_DATA_DIR", ""}, nil, ErrInvalidSetting, `H9_DATA_DIR must not be empty`},
	{"HTTP address without a port", []string{"H9_HTTP_ADDR", "9090"}, nil, ErrInvalidSetting, `H9_HTTP_ADDR must be host:port or :port, e.g. :9090 (got "9090")`},
	{"HTTP address as a URL", []string{"H9_HTTP_ADDR", "http://localhost:9090"}, nil, ErrInvalidSetting, `H9_HTTP_ADDR must be host:port or :port, e.g. :9090 (got "http://localhost:9090")`},
	{"HTTP port out of range", []string{"H9_HTTP_ADDR", ":90900"}, nil, ErrInvalidSetting, `H9_HTTP_ADDR's port must be a number from 0 to 65535 (got ":90900")`},
	{"HTTP port by name", []string{"H9_HTTP_ADDR", ":http"}, nil, ErrInvalidSetting, `H9_HTTP_ADDR's port must be a number from 0 to 65535 (got ":http")`},
	{"lease TTL too short", []string{"H9_LEASE_TTL", "500ms"}, nil, ErrInvalidSetting, "H9_LEASE_TTL must be at least 1s (got 500ms)"},
	{"database URL that does not parse", []string{"H9_DATABASE_URL", "postgres://h9:s3cret-pw@db:port/h9"}, nil, ErrInvalidSetting,
		"H9_DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:5432/database) or key=value string"},
	{"negative budget", []string{"H9_SESSION_TOKEN_BUDGET", "-1"}, nil, ErrInvalidSetting, `H9_SESSION_TOKEN_BUDGET must not be negative (got -1)`},
	{"budget not a number", []string{"H9_SESSION_TOKEN_BUDGET", "10k"}, nil, ErrInvalidSetting, `H9_SESSION_TOKEN_BUDGET="10k" is not a valid whole number`},
	{"price not a number", []string{"H9_PRICE_INPUT", "$2"}, nil, ErrInvalidSetting, `H9_PRICE_INPUT="$2" is not a valid number (e.g. 2.5)`},
	{"negative price", []string{"H9_PRICE_OUTPUT", "-8"}, nil, ErrInvalidSetting, `H9_PRICE_OUTPUT must be a price in US dollars per million tokens, 0 or more (got -8)`},
	{"infinite price", []string{"H9_PRICE_INPUT", "Inf"}, nil, ErrInvalidSetting, `H9_PRICE_INPUT must be a price in US dollars per million tokens, 0 or more (got +Inf)`},
	{"NaN price", []string{"H9_PRICE_INPUT", "NaN"}, nil, ErrInvalidSetting, `H9_PRICE_INPUT must be a price in US dollars per million tokens, 0 or more (got NaN)`},
	{"attachment limit not a size", []string{"H9_ATTACHMENT_MAX", "big"}, nil, ErrInvalidSetting, `H9_ATTACHMENT_MAX="big" is not a valid size (e.g. 4GiB, 512MiB)`},
	{"zero attachment limit", []string{"H9_ATTACHMENT_MAX", "0"}, nil, ErrInvalidSetting, `H9_ATTACHMENT_MAX="0" is not a valid size (e.g. 4GiB, 512MiB)`},
	{"forge poll too short", []string{"H9_FORGE_POLL", "5s"}, nil, ErrInvalidSetting, "H9_FORGE_POLL must be at least 10s (got 5s)"},
	{"forge poll not a duration", []string{"H9_FORGE_POLL", "often"}, nil, ErrInvalidSetting, `H9_FORGE_POLL="often" is not a valid duration (e.g. 90s, 2m)`},
	{"follow time shorter than a poll", []string{"H9_FORGE_FOLLOW_FOR", "30s"}, nil, ErrInvalidSetting, "H9_FORGE_FOLLOW_FOR must be at least 1m0s (got 30s)"},
	{"unknown vision", []string{"H9_MODEL_VISION", "maybe"}, nil, ErrInvalidSetting, `H9_MODEL_VISION must be one of auto, true, false (got "maybe")`},
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range configErrors {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env...)
			for _, k := range tt.drop {
				clearVar(t, k)
			}
			_, err := loadConfig()
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if err.Error() != tt.want {
				t.Errorf("message = %q, want %q", err.Error(), tt.want)
			}
		})
	}
}

func TestConfigErrorsNeverQuoteTokens(t *testing.T) {
	setEnv(t, "SLACK_BOT_TOKEN", "xapp-secret-value-123", "SLACK_APP_TOKEN", "xoxb-secret-value-456")
	_, err := loadConfig()
	if err == nil || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("err = %v", err)
	}
}

func clearVar(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "")
	unsetenv(k)
}

// H9_MCP_FILE is checked at start with one line naming the setting.
func TestConfigMCPFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("servers:\n- name: jira\n  url: https://x/mcp\n  command: ./y\n"), 0o600)
	unset := filepath.Join(dir, "unset.yml")
	os.WriteFile(unset, []byte("servers:\n- name: jira\n  url: https://x/mcp\n  headers_env: {Authorization: H9_TEST_NOT_SET}\n"), 0o600)
	for path, want := range map[string]string{
		bad:                        `H9_MCP_FILE: server 1 ("jira"): set exactly one of url and command`,
		unset:                      "names H9_TEST_NOT_SET, which is not set",
		filepath.Join(dir, "none"): "H9_MCP_FILE: cannot read",
	} {
		c := Config{MCPFile: path, MCPTimeout: time.Minute}
		err := c.loadMCP()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", filepath.Base(path), err, want)
		}
	}
}

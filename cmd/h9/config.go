package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/h9-app/h9/agent/mcp"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/gitrepo"
	"github.com/kelseyhightower/envconfig"
	"golang.org/x/sys/unix"
)

// envPrefix is the prefix of h9's own settings. Settings with an explicit envconfig tag
// (the SLACK_* and OPENAI_* ones) are looked up as H9_<tag> first, then as <tag> alone.
const envPrefix = "H9"

// Config is h9's whole configuration, read from the environment.
// The desc tags are what `h9 -h` prints; keep them short.
type Config struct {
	SlackBotToken string `envconfig:"SLACK_BOT_TOKEN" required:"true" desc:"bot token (xoxb-…) from OAuth & Permissions"`
	SlackAppToken string `envconfig:"SLACK_APP_TOKEN" required:"true" desc:"app-level token (xapp-…) with connections:write, for Socket Mode"`
	SlackAPIURL   string `envconfig:"SLACK_API_URL" default:"https://slack.com/api/" desc:"Slack Web API base URL (GovSlack, tests); must end in /"`
	OpenAIBaseURL string `envconfig:"OPENAI_BASE_URL" default:"https://api.openai.com/v1" desc:"any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM, OpenRouter, Gemini, Mistral, …); Azure: …/openai/deployments/NAME?api-version=V or …/openai/v1"`
	OpenAIAPIKey  string `envconfig:"OPENAI_API_KEY" desc:"key for that endpoint (local servers need none)"`

	Model             string         `split_words:"true" default:"gpt-4.1" desc:"model name sent to the endpoint"`
	DataDir           string         `split_words:"true" default:"./h9-data" desc:"directory for h9.db and workspaces/<session-id>/"`
	Sandbox           string         `split_words:"true" default:"auto" desc:"auto (bubblewrap when it works, else Landlock-confined, else refuse to start), bwrap or landlock (required), or none (unsandboxed)"`
	SandboxROPaths    []string       `split_words:"true" desc:"comma-separated absolute paths shown read-only in the sandbox (a shared toolchain or module cache)"`
	SandboxMemory     workspace.Size `split_words:"true" default:"4GiB" desc:"memory of one command, all its processes together (cgroup)"`
	SandboxPids       int            `split_words:"true" default:"1024" desc:"processes and threads of one command at once (cgroup)"`
	SandboxFileSize   workspace.Size `split_words:"true" default:"1GiB" desc:"largest file one command may write"`
	SandboxTmpSize    workspace.Size `split_words:"true" default:"1GiB" desc:"size of a command's private /tmp (and /dev/shm) under bubblewrap"`
	WorkspaceTemplate string         `split_words:"true" desc:"directory copied into every new workspace (empty: none)"`
	SkillsDir         string         `split_words:"true" desc:"directory of skills for the use_skill tool (empty: none)"`
	AllowedUsers      []string       `split_words:"true" desc:"comma-separated Slack user IDs allowed to use h9 (empty: everyone)"`
	AllowedChannels   []string       `split_words:"true" desc:"comma-separated Slack channel IDs h9 works in (empty: every channel it is in)"`
	Admins            []string       `split_words:"true" desc:"comma-separated Slack user IDs who may act on any session (empty: none)"`
	MaxSteps          int            `split_words:"true" default:"50" desc:"model steps per run before it stops"`
	ContextWindow     int            `split_words:"true" default:"128000" desc:"model context window in tokens; history is compacted at 80%"`
	ModelStream       bool           `split_words:"true" default:"true" desc:"stream model answers (server-sent events); false sends plain requests"`
	ModelTimeout      time.Duration  `split_words:"true" default:"2m" desc:"longest wait for the model endpoint to send anything: the answer's first byte, then between two chunks (plain requests: the whole answer)"`
	ModelRetries      int            `split_words:"true" default:"4" desc:"tries per model request before the run fails"`
	CoalesceInterval  time.Duration  `split_words:"true" default:"1s" desc:"minimum time between edits of one checklist message"`
	MaxConcurrentRuns int            `split_words:"true" default:"0" desc:"agent runs at once across all threads; 0 = no limit (others wait their turn)"`
	Repos             string         `split_words:"true" desc:"repositories as name=URL pairs, comma-separated (URL: anything git clone accepts: https, ssh, a local path)"`
	ReposFile         string         `split_words:"true" desc:"YAML file of repositories: repos: [{name, url, branch, setup, channels, github, forge, follow_up, network, secrets}] (docs/repositories.md)"`
	GithubToken       string         `split_words:"true" desc:"GitHub token for pull requests, and for https pushes to GitHub when git has no other credential"`
	GithubAPIUrl      string         `split_words:"true" default:"https://api.github.com/" desc:"GitHub REST API base (GitHub Enterprise: https://HOST/api/v3/); must end in /"`
	GitlabToken       string         `split_words:"true" desc:"GitLab token (api scope, Developer or above) for merge requests and https pushes; a repo's forge.token_env may name another variable"`
	GitlabAPIUrl      string         `split_words:"true" default:"https://gitlab.com/api/v4/" desc:"GitLab REST API base (self-managed: https://HOST/api/v4/); must end in /"`
	GiteaToken        string         `split_words:"true" desc:"Gitea/Forgejo token (scopes write:repository, write:issue, read:user) for pull requests and https pushes; a repo's forge.api gives the server"`
	GitName           string         `split_words:"true" default:"h9" desc:"author name of h9's commits"`
	GitEmail          string         `split_words:"true" default:"h9@localhost" desc:"author email of h9's commits"`
	LogFormat         string         `split_words:"true" default:"text" desc:"log format on stderr: text or json"`
	LogLevel          string         `split_words:"true" default:"info" desc:"log level: debug, info, warn or error"`

	HTTPAddr string `split_words:"true" desc:"host:port (e.g. :9090) serving /healthz, /readyz and /metrics (Prometheus); empty = off"`

	// The fleet: many replicas on one PostgreSQL database.
	DatabaseURL string        `split_words:"true" desc:"postgres://… : keep all state in PostgreSQL (shared by every replica); empty = bbolt in H9_DATA_DIR/h9.db"`
	LeaseTTL    time.Duration `split_words:"true" default:"15s" desc:"how long a replica owns a session without renewing its lease (at least 1s)"`
	// Tokens: what a session may use, and what they cost.
	SessionTokenBudget int     `split_words:"true" default:"0" desc:"tokens one session may use (planning included) before it stops with a Raise budget button, which allows as many again; 0 = no budget"`
	PriceInput         float64 `split_words:"true" default:"0" desc:"US dollars per million prompt tokens: token counts then show a cost; 0 = none"`
	PriceOutput        float64 `split_words:"true" default:"0" desc:"US dollars per million completion tokens: token counts then show a cost; 0 = none"`

	FilesConfig      // shared files and images
	FollowConfig     // following the requests h9 opened (repos.go)
	AutomationConfig // automations (config_automations.go)
	// MCP servers (mcp.go).
	MCPFile    string        `split_words:"true" desc:"YAML file of MCP servers: servers: [{name, url | command, headers_env, repos, channels, tools}] (docs/mcp.md); empty = none"`
	MCPTimeout time.Duration `split_words:"true" default:"60s" desc:"deadline of one MCP tool call; a server slower than that is a tool error"`

	// The agent's network for sessions without a repository (network.go).
	NetworkAllow   []string `split_words:"true" desc:"comma-separated hosts (host, *.suffix, host:port, an IP) the agent's commands may reach through h9's proxy in sessions without a repository; empty = no network"`
	NetworkPresets []string `split_words:"true" desc:"comma-separated presets added to H9_NETWORK_ALLOW: packages (the public Go, npm, PyPI, crates.io, Maven Central and RubyGems registries)"`

	repos       []gitrepo.Repo    // H9_REPOS and H9_REPOS_FILE, checked (validate)
	forgeTokens map[string]string // token_env name → value (repos.go)
	mcp         []mcp.Server      // H9_MCP_FILE, checked (validate)
	// secrets are the values of the repositories' `secrets:`, by name.
	secrets map[string]string
}

// loadConfig reads the environment into a Config and validates it.
// Every error it returns is one line fit for an operator.
func loadConfig() (Config, error) {
	var c Config
	if err := envconfig.Process(envPrefix, &c); err != nil {
		return Config{}, explainEnvError(err)
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// explainEnvError turns envconfig's messages into one line naming the variable.
func explainEnvError(err error) error {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		// pe.Value is never a token: tokens are strings and cannot fail to parse.
		return invalid("%s=%q is not a valid %s", pe.KeyName, pe.Value, kindName(pe.TypeName))
	}
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "required key "); ok {
		key = strings.TrimSuffix(key, " missing value")
		return missing(key)
	}
	return invalid("%s", msg)
}

func kindName(goType string) string {
	switch goType {
	case "int":
		return "whole number"
	case "time.Duration":
		return "duration (e.g. 90s, 2m)"
	case "bool":
		return "boolean (true or false)"
	case "workspace.Size":
		return "size (e.g. 4GiB, 512MiB)"
	case "float64":
		return "number (e.g. 2.5)"
	}
	return goType
}

// validate checks what envconfig cannot: empty required values and enumerations.
func (c *Config) validate() error {
	c.Sandbox = strings.ToLower(strings.TrimSpace(c.Sandbox))
	c.LogFormat = strings.ToLower(strings.TrimSpace(c.LogFormat))
	c.LogLevel = strings.ToLower(strings.TrimSpace(c.LogLevel))
	c.ModelVision = strings.ToLower(strings.TrimSpace(c.ModelVision))
	c.SandboxROPaths = cleanList(c.SandboxROPaths)
	if c.Sandbox == "" {
		c.Sandbox = "auto"
	}
	checks := []func() error{
		func() error { return requireToken("SLACK_BOT_TOKEN", c.SlackBotToken, "xoxb-") },
		func() error { return requireToken("SLACK_APP_TOKEN", c.SlackAppToken, "xapp-") },
		func() error { return checkBaseURL("SLACK_API_URL", c.SlackAPIURL) },
		func() error { return checkModelURL(c.OpenAIBaseURL) },
		func() error { return checkSecretSpacing("OPENAI_API_KEY", c.OpenAIAPIKey) },
		func() error { return checkSecretSpacing("H9_GITHUB_TOKEN", c.GithubToken) },
		func() error { return checkSecretSpacing("H9_GITLAB_TOKEN", c.GitlabToken) },
		func() error { return checkSecretSpacing("H9_GITEA_TOKEN", c.GiteaToken) },
		func() error { return nonEmpty("H9_MODEL", c.Model) },
		func() error { return nonEmpty("H9_DATA_DIR", c.DataDir) },
		func() error { return oneOf("H9_SANDBOX", c.Sandbox, "auto", "bwrap", "landlock", "none") },
		func() error { return oneOf("H9_LOG_FORMAT", c.LogFormat, "text", "json") },
		func() error { return oneOf("H9_LOG_LEVEL", c.LogLevel, "debug", "info", "warn", "error") },
		func() error { return positive("H9_MAX_STEPS", c.MaxSteps) },
		func() error { return positive("H9_CONTEXT_WINDOW", c.ContextWindow) },
		func() error { return positive("H9_MODEL_RETRIES", c.ModelRetries) },
		func() error { return positiveDuration("H9_MODEL_TIMEOUT", c.ModelTimeout) },
		func() error { return nonNegativeDuration("H9_COALESCE_INTERVAL", c.CoalesceInterval) },
		func() error { return nonNegative("H9_MAX_CONCURRENT_RUNS", c.MaxConcurrentRuns) },
		func() error { return positive("H9_SANDBOX_PIDS", c.SandboxPids) },
		func() error { return checkROPaths(c.SandboxROPaths) },
		func() error { return checkHTTPAddr(c.HTTPAddr) },
		func() error { return checkDatabaseURL(c.DatabaseURL) },
		func() error { return atLeast("H9_LEASE_TTL", c.LeaseTTL, minLeaseTTL) },
		func() error { return nonNegative("H9_SESSION_TOKEN_BUDGET", c.SessionTokenBudget) },
		func() error { return checkPrice("H9_PRICE_INPUT", c.PriceInput) },
		func() error { return checkPrice("H9_PRICE_OUTPUT", c.PriceOutput) },
		func() error { return checkBaseURL("H9_GITHUB_API_URL", c.GithubAPIUrl) },
		func() error { return checkBaseURL("H9_GITLAB_API_URL", c.GitlabAPIUrl) },
		func() error { return checkGitAuthor(c.GitName, c.GitEmail) },
		c.checkFiles,
		c.checkFollow,
		c.loadRepos,
		c.checkAutomations,
		c.checkStartup,
		c.loadMCP,
		c.checkNetwork,
		c.loadRepoSecrets,
		c.loadForgeTokens,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	c.AllowedUsers = cleanList(c.AllowedUsers)
	c.AllowedChannels = cleanList(c.AllowedChannels)
	c.Admins = cleanList(c.Admins)
	return nil
}

// requireToken never puts the token's value into the error.
func requireToken(name, value, prefix string) error {
	if strings.TrimSpace(value) == "" {
		return missing(name)
	}
	if err := checkSecretSpacing(name, value); err != nil {
		return err
	}
	if !strings.HasPrefix(value, prefix) {
		return invalid("%s", wrongToken(name, value, prefix))
	}
	return nil
}

// slackTokenKinds says where each kind of Slack token comes from.
var slackTokenKinds = map[string]string{
	"xoxb-": "the Bot User OAuth Token (xoxb-…, OAuth & Permissions)",
	"xapp-": "an app-level token (xapp-…, Basic Information → App-Level Tokens, with connections:write)",
	"xoxp-": "a user token (xoxp-…)",
}

// wrongToken names what the value looks like and what h9 needs instead,
// quoting none of it.
func wrongToken(name, value, want string) string {
	needs := slackTokenKinds[want]
	if strings.HasPrefix(value, `"`) || strings.HasPrefix(value, "'") {
		return name + " is wrapped in quotes: remove them (an env file passes them on as part of the value)"
	}
	for prefix, kind := range slackTokenKinds {
		if strings.HasPrefix(value, prefix) {
			return name + " holds " + kind + "; h9 needs " + needs + " there"
		}
	}
	return name + " is not " + needs + ": it does not start with " + want
}

// checkSecretSpacing refuses a secret with a space or line break at either
// end (a copy-paste slip Slack or the forge would refuse later, less
// clearly), without quoting it.
func checkSecretSpacing(name, value string) error {
	if value != strings.TrimSpace(value) {
		return invalid("%s has a space or line break at its start or end (a copy-paste slip?): remove it", name)
	}
	return nil
}

// checkBaseURL is checkHTTPURL for an API base, which must end in / (the
// clients append method paths to it).
func checkBaseURL(name, v string) error {
	if err := checkHTTPURL(name, v); err != nil {
		return err
	}
	if !strings.HasSuffix(v, "/") {
		return invalid("%s must end in / (got %q)", name, v)
	}
	return nil
}

// checkModelURL is checkHTTPURL plus the agent's own reading of the URL
// (an Azure deployment URL needs its api-version).
func checkModelURL(v string) error {
	if err := checkHTTPURL("OPENAI_BASE_URL", v); err != nil {
		return err
	}
	if u, _ := url.Parse(v); u != nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/chat/completions") {
		return invalid("OPENAI_BASE_URL is the chat endpoint, not the API base: drop /chat/completions (e.g. https://api.openai.com/v1)")
	}
	if err := openai.CheckBaseURL(v); err != nil {
		return invalid("OPENAI_BASE_URL: %v", err)
	}
	return nil
}

func checkHTTPURL(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("%s must be an http(s) URL (got %q)", name, v)
	}
	return nil
}

func nonEmpty(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid("%s must not be empty", name)
	}
	return nil
}

func oneOf(name, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return invalid("%s must be one of %s (got %q)", name, strings.Join(allowed, ", "), v)
}

func positive(name string, v int) error {
	if v <= 0 {
		return invalid("%s must be greater than 0 (got %d)", name, v)
	}
	return nil
}

func nonNegative(name string, v int) error {
	if v < 0 {
		return invalid("%s must not be negative (got %d)", name, v)
	}
	return nil
}

func positiveDuration(name string, v time.Duration) error {
	if v <= 0 {
		return invalid("%s must be greater than 0 (got %s)", name, v)
	}
	return nil
}

func nonNegativeDuration(name string, v time.Duration) error {
	if v < 0 {
		return invalid("%s must not be negative (got %s)", name, v)
	}
	return nil
}

// cleanList drops blanks so "U1, ,U2," means [U1 U2] and "" means everyone/none.
func cleanList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var (
	// ErrMissingSetting: a required environment variable is unset or empty.
	ErrMissingSetting = errors.New("missing setting")
	// ErrInvalidSetting: an environment variable has a value h9 cannot use.
	ErrInvalidSetting = errors.New("invalid setting")
	// ErrDataDirLocked: another process (usually another h9) holds the lock on h9.db.
	ErrDataDirLocked = errors.New("data directory locked")
	// ErrUsage: the command line names no known command.
	ErrUsage = errors.New("usage")
	// ErrDoctorFailed: at least one `h9 doctor` check failed.
	ErrDoctorFailed = errors.New("doctor: a check failed")
)

// lineError is a one-line message for the operator that still matches a sentinel with errors.Is;
// the sentinel's own text is left out so the line reads naturally.
type lineError struct {
	kind error
	msg  string
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.kind }

func lineErrorf(kind error, format string, args ...any) error {
	return &lineError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func missing(name string) error { return lineErrorf(ErrMissingSetting, "%s is required", name) }

func invalid(format string, args ...any) error { return lineErrorf(ErrInvalidSetting, format, args...) }

// checkPrice accepts a price per million tokens: a finite number, 0 or more.
func checkPrice(name string, v float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return invalid("%s must be a price in US dollars per million tokens, 0 or more (got %v)", name, v)
	}
	return nil
}

// FilesConfig is the settings of files shared in threads and of images
// sent to the model (ARCHITECTURE.md, "Files and images from the thread").
type FilesConfig struct {
	AttachmentMax workspace.Size `split_words:"true" default:"20MiB" desc:"largest file h9 downloads from a thread into the workspace's .h9/attachments/ (10 per message)"`
	ModelVision   string         `split_words:"true" default:"auto" desc:"send shared images to the model: auto (until the endpoint refuses them), true or false"`
}

// checkFiles validates the files settings, one line naming the one at fault.
func (c *Config) checkFiles() error {
	if c.AttachmentMax <= 0 {
		return invalid("H9_ATTACHMENT_MAX must be a positive size, e.g. 20MiB (got %d bytes)", int64(c.AttachmentMax))
	}
	return oneOf("H9_MODEL_VISION", c.ModelVision, "auto", "true", "false")
}

// Slack's IDs: users U… or W… (Enterprise Grid), conversations C…
// (public), G… (private, older) or D… (direct message), then capitals and digits.
var (
	slackUserIDRE    = regexp.MustCompile(`^[UW][A-Z0-9]+$`)
	slackChannelIDRE = regexp.MustCompile(`^[CGD][A-Z0-9]+$`)
)

const (
	userIDHint    = "a user ID looks like U012AB3CD: in Slack, open the person's profile → ⋮ → Copy member ID"
	channelIDHint = "a channel ID looks like C012AB3CD: in Slack, open the channel's name → About, the ID is at the bottom"
)

// checkStartup is what start-up checks beyond each value's form: the
// Slack IDs' shape (a name or an email would lock everyone out or make no
// admin, silently) and the directories, which must exist now rather than
// fail in the first session.
func (c *Config) checkStartup() error {
	checks := []func() error{
		func() error {
			return checkSlackIDs("H9_ALLOWED_USERS", c.AllowedUsers, slackUserIDRE, "user", userIDHint)
		},
		func() error { return checkSlackIDs("H9_ADMINS", c.Admins, slackUserIDRE, "user", userIDHint) },
		func() error {
			return checkSlackIDs("H9_ALLOWED_CHANNELS", c.AllowedChannels, slackChannelIDRE, "channel", channelIDHint)
		},
		func() error { return existingDir("H9_WORKSPACE_TEMPLATE", c.WorkspaceTemplate) },
		func() error { return existingDir("H9_SKILLS_DIR", c.SkillsDir) },
		func() error { return creatableDir("H9_DATA_DIR", c.DataDir) },
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func checkSlackIDs(name string, ids []string, re *regexp.Regexp, kind, hint string) error {
	for _, id := range cleanList(ids) {
		if !re.MatchString(id) {
			return invalid("%s: %q is not a Slack %s ID; %s", name, id, kind, hint)
		}
	}
	return nil
}

// existingDir: empty (the setting is off) or a directory h9 can read.
func existingDir(name, path string) error {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return invalid("%s=%q is not a directory: point it at an existing directory or unset it", name, path)
	}
	if unix.Access(path, unix.R_OK|unix.X_OK) != nil {
		return invalid("%s=%q cannot be read by this user: fix its permissions", name, path)
	}
	return nil
}

// creatableDir: a directory h9 may write, or one it may create (its
// nearest existing parent is a writable directory).
func creatableDir(name, path string) error {
	p := filepath.Clean(path)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return invalid("%s=%q: %s is a file, not a directory", name, path, p)
		case err == nil:
			if unix.Access(p, unix.W_OK|unix.X_OK) != nil {
				return invalid("%s=%q: %s is not writable by this user: fix its owner or choose another directory", name, path, p)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return invalid("%s=%q cannot be used: %v", name, path, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/planning"
)

// Agent is the part of *agent.Engine the bot calls. Declared here, where it
// is used, so the bot depends on behaviour and not on the engine type.
// The bot asks for an intent and passes the session's mode and token
// budget with every run.
type Agent interface {
	Run(ctx context.Context, sessionID string, req agent.Request, opts agent.RunOptions) (agent.Result, error)
	// Snapshot is the session's todos, their evidence and its tokens as
	// its latest commit left them.
	Snapshot(ctx context.Context, sessionID string) (agent.Snapshot, error)
	CancelOpenTodos(ctx context.Context, sessionID string) ([]planning.TodoItem, error)
}

// Config is everything the bot needs; New checks it once.
type Config struct {
	BotToken string // xoxb-…, required
	AppToken string // xapp-… with connections:write, required
	APIURL   string // Web API base ending in "/"; "" = https://slack.com/api/

	Store  Store  // required: sessions, dedup, channel settings
	Leases Leases // required: which sessions this replica may work on
	// Fleet, when set, is what replicas sharing the Store use to hand
	// each other messages (agent/store/pgstore); nil: this process is the
	// only one (bbolt).
	Fleet Fleet
	Agent Agent // required
	Repos Repos // the configured repositories; nil = none
	// Forges gives each repository's forge client, for following the
	// requests h9 opened (following.go); nil = no following.
	Forges Forges
	// ForgePoll is how often a followed request is read (0 = 60s);
	// ForgeFollowFor stops following one untouched this long (0 = 720h).
	ForgePoll, ForgeFollowFor time.Duration
	// Workspaces opens sessions' workspaces for the files shared in their
	// threads (attachfetch.go); nil: files are not downloaded.
	Workspaces Workspaces
	// AttachmentMax is the largest file downloaded from a thread; 0 = 20 MiB.
	AttachmentMax int64
	// Network is h9's egress proxy, told of hosts the thread allows;
	// nil: no session has an allow list.
	Network Network

	// SandboxLevel is the workspace sandbox in force ("bwrap" or "none");
	// "none" marks every checklist as unsandboxed. SandboxWarning, when set,
	// says why (logged at start).
	SandboxLevel   string
	SandboxWarning string

	AllowedUsers    []string // user ids allowed to act; empty = everyone
	AllowedChannels []string // channel ids h9 works in; empty = every channel
	Admins          []string // user ids that may press any session's buttons

	Logger  *slog.Logger // nil = slog.Default()
	Metrics Metrics      // nil = counts nothing

	// CoalesceInterval is the least time between two chat.update calls on
	// one checklist; 0 = 1s (Slack's Tier 3 is ~50/min per workspace).
	CoalesceInterval time.Duration
	// MaxConcurrentRuns bounds agent runs across all sessions; 0 = no bound.
	MaxConcurrentRuns int

	// SessionTokenBudget is each session's token budget, and what Raise
	// budget adds to it; 0 = no budget.
	SessionTokenBudget int
	// PriceInput and PriceOutput are US dollars per million prompt and
	// completion tokens; with either set, token counts come with a cost.
	PriceInput, PriceOutput float64

	// AutomationsFile is H9_AUTOMATIONS_FILE, the operator's automations
	// ("" = none); AutomationMinInterval (H9_AUTOMATION_MIN_INTERVAL, 0 =
	// 1h) refuses schedules that fire more often; AutomationRefresh
	// (H9_AUTOMATION_REFRESH, 0 = 10m) is how often a repository's own file
	// is read again (ARCHITECTURE.md, "Automations").
	AutomationsFile                          string
	AutomationMinInterval, AutomationRefresh time.Duration
}

const (
	defaultAPIURL           = "https://slack.com/api/"
	defaultCoalesceInterval = time.Second
)

// withDefaults checks cfg and fills the optional fields.
func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.BotToken == "":
		return cfg, fmt.Errorf("%w: BotToken is required", ErrInvalidConfig)
	case cfg.AppToken == "":
		return cfg, fmt.Errorf("%w: AppToken is required", ErrInvalidConfig)
	case cfg.Store == nil:
		return cfg, fmt.Errorf("%w: Store is required", ErrInvalidConfig)
	case cfg.Leases == nil:
		return cfg, fmt.Errorf("%w: Leases is required", ErrInvalidConfig)
	case cfg.Agent == nil:
		return cfg, fmt.Errorf("%w: Agent is required", ErrInvalidConfig)
	case cfg.MaxConcurrentRuns < 0:
		return cfg, fmt.Errorf("%w: MaxConcurrentRuns must not be negative", ErrInvalidConfig)
	case cfg.SessionTokenBudget < 0:
		return cfg, fmt.Errorf("%w: SessionTokenBudget must not be negative", ErrInvalidConfig)
	case !validPrice(cfg.PriceInput) || !validPrice(cfg.PriceOutput):
		return cfg, fmt.Errorf("%w: prices must be finite and not negative", ErrInvalidConfig)
	}
	if cfg.APIURL == "" {
		cfg.APIURL = defaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		return cfg, fmt.Errorf("%w: APIURL %q must end with /", ErrInvalidConfig, cfg.APIURL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.CoalesceInterval <= 0 {
		cfg.CoalesceInterval = defaultCoalesceInterval
	}
	if cfg.ForgePoll <= 0 {
		cfg.ForgePoll = DefaultForgePoll
	}
	if err := (automation.Config{MinInterval: cfg.AutomationMinInterval, Refresh: cfg.AutomationRefresh}).WithDefaults().Check(); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.ForgeFollowFor <= 0 {
		cfg.ForgeFollowFor = DefaultForgeFollowFor
	}
	return cfg, nil
}

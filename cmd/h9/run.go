package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/bot"
	"github.com/h9-app/h9/workspace"
)

// workspacesDir is where each session's directory lives, under H9_DATA_DIR.
const workspacesDir = "workspaces"

// run wires the packages together and serves until ctx is cancelled (SIGINT/SIGTERM).
// The database is opened first so a second h9 on the same data directory stops
// before it touches Slack. One store serves the agent and the bot.
func run(ctx context.Context, cfg Config, stderr io.Writer) error {
	log := newLogger(stderr, cfg.LogFormat, cfg.LogLevel, secretsOf(cfg))
	metrics := newMetrics(cfg)
	st, err := openStorage(ctx, cfg, log, metrics.forStore())
	if err != nil {
		return err
	}
	defer closeStorage(st, log)

	net, err := cfg.startNetwork(metrics.forEgress(), log.With("component", "egress"))
	if err != nil {
		return fmt.Errorf("network: %w", err)
	}
	defer net.close()
	ws, err := workspace.NewManager(net.into(cfg.workspaceConfig(filepath.Join(cfg.DataDir, workspacesDir)), cfg))
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	warnIfUnsandboxed(log, cfg, ws)

	repos, err := cfg.newRepos(ws)
	if err != nil {
		return fmt.Errorf("repositories: %w", err)
	}
	defer repos.Close() // stops making spare checkouts
	repos.Warm()
	tools := cfg.newMCP(log, metrics)
	defer tools.Close()
	tools.Start() // in the background: a server that is down delays nothing
	engine, err := newEngine(cfg, st, ws, log, metrics.forAgent(), tools)
	if err != nil {
		return err
	}
	b, err := bot.New(net.intoBot(botConfig(cfg, st, engine, repos, ws, log, metrics)))
	if err != nil {
		return fmt.Errorf("bot: %w", err)
	}
	net.serve(b)
	srv, err := serveHTTP(cfg, metrics, b, st, log.With("component", "http"))
	if err != nil {
		return err
	}
	defer srv.stop() // before the store closes

	log.Info("h9 starting", "data_dir", cfg.DataDir, "store", st.kind, "replica", st.replica, "model", cfg.Model, "model_endpoint", cfg.OpenAIBaseURL,
		"model_stream", cfg.ModelStream, "slack_api", cfg.SlackAPIURL, "sandbox", ws.Level(), "repositories", len(cfg.repos))
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	unwatch := watchFirstConnection(runCtx, b.Connected, slackStartWait, stopRun, cfg.SlackAPIURL)
	err = b.Run(runCtx)
	unwatch()
	if cause := context.Cause(runCtx); errors.Is(cause, errSlackUnreachable) {
		return cause
	}
	if err != nil {
		return socketError(err)
	}
	log.Info("h9 stopped")
	return nil
}

// botConfig is the bot's part of the configuration, on the pieces run built.
func botConfig(cfg Config, st storage, engine bot.Agent, repos bot.Repos, ws *workspace.Manager, log *slog.Logger, metrics *promMetrics) bot.Config {
	bc := bot.Config{
		BotToken:          cfg.SlackBotToken,
		AppToken:          cfg.SlackAppToken,
		APIURL:            cfg.SlackAPIURL,
		Store:             st,
		Leases:            st,
		Fleet:             st.fleet,
		Agent:             engine,
		Repos:             repos,
		Workspaces:        ws,
		AttachmentMax:     int64(cfg.AttachmentMax),
		SandboxLevel:      string(ws.Level()),
		SandboxWarning:    ws.Warning(),
		AllowedUsers:      cfg.AllowedUsers,
		AllowedChannels:   cfg.AllowedChannels,
		Admins:            cfg.Admins,
		Logger:            log.With("component", "bot"),
		CoalesceInterval:  cfg.CoalesceInterval,
		MaxConcurrentRuns: cfg.MaxConcurrentRuns,
		Metrics:           metrics.forBot(),

		SessionTokenBudget: cfg.SessionTokenBudget,
		PriceInput:         cfg.PriceInput,
		PriceOutput:        cfg.PriceOutput,
	}
	cfg.FollowConfig.follow(&bc, repos)
	cfg.AutomationConfig.automate(&bc)
	return bc
}

// newEngine builds the agent on the configured model endpoint and the store.
func newEngine(cfg Config, st agent.Store, ws *workspace.Manager, log *slog.Logger, metrics agent.Metrics, tools agent.ToolSource) (*agent.Engine, error) {
	model, err := newModel(cfg, cfg.ModelTimeout)
	if err != nil {
		return nil, err
	}
	engine, err := agent.New(agent.Config{
		Store:         st,
		Model:         model,
		ModelName:     cfg.Model,
		Workspaces:    ws,
		SkillsDir:     cfg.SkillsDir,
		MaxSteps:      cfg.MaxSteps,
		ContextWindow: cfg.ContextWindow,
		MaxRetries:    cfg.ModelRetries,
		Logger:        log.With("component", "agent"),
		Metrics:       metrics,
		Vision:        agent.Vision(cfg.ModelVision),
		Tools:         tools,
	})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return engine, nil
}

// newModel is the model endpoint as configured; idle bounds each wait for it.
func newModel(cfg Config, idle time.Duration) (*openai.Client, error) {
	m, err := openai.New(openai.Config{
		BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Stream: cfg.ModelStream, IdleTimeout: idle,
	})
	if err != nil {
		return nil, invalid("OPENAI_BASE_URL: %v", err)
	}
	return m, nil
}

// warnIfUnsandboxed makes running without bubblewrap impossible to miss in the log.
func warnIfUnsandboxed(log *slog.Logger, cfg Config, ws *workspace.Manager) {
	if ws.Level() != workspace.LevelNone {
		return
	}
	why := ws.Warning()
	if why == "" {
		why = "H9_SANDBOX=none"
	}
	log.Warn("SANDBOX OFF: the agent's bash commands run unsandboxed with h9's own rights "+
		"(files, network, environment); install bubblewrap or set H9_SANDBOX=bwrap to refuse this",
		"sandbox_setting", cfg.Sandbox, "why", why)
}

func closeStorage(st storage, log *slog.Logger) {
	if err := st.close(); err != nil {
		log.Error("closing the database", "err", err)
	}
}

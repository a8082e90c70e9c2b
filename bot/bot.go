// Package bot is h9's Slack app: Socket Mode envelopes in, one actor per
// active thread, the live checklist, the review buttons and the seed's
// auto-run loop, all persisted in bbolt.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// Bot is a running Slack app. Make one with New, then call Run.
type Bot struct {
	cfg   Config
	log   *slog.Logger
	api   *slackAPI
	sm    *socketmode.Client
	store *store
	perms permissions
	seen  *dedup
	reg   *registry

	unsandboxed bool
	runSlots    chan struct{} // nil = unbounded
	ackWork     chan struct{} // slots for commands' work after their ack

	botUserID string // from auth.test; mentions are "<@botUserID>"
	teamID    string // from auth.test; "" when unknown (see sessionTeam)

	// runCtx parents every agent run; cancelled only by shutdown, so that
	// runs outlive one envelope and end together.
	runCtx     context.Context
	cancelRuns context.CancelFunc
	bg         context.Context // Slack calls: survives Run's ctx so final edits land
	stopping   atomic.Bool
	started    atomic.Bool
}

// New checks cfg and builds the bot; it does not connect (Run does).
func New(cfg Config) (*Bot, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := newStore(cfg.DB)
	if err != nil {
		return nil, err
	}
	seen, err := newDedup(cfg.DB, cfg.Logger)
	if err != nil {
		return nil, err
	}
	api := newSlackAPI(cfg.BotToken, cfg.AppToken, cfg.APIURL, cfg.Logger)
	b := &Bot{
		cfg:         cfg,
		log:         cfg.Logger,
		api:         api,
		sm:          socketmode.New(api.c, socketmode.OptionLog(slogPrinter{cfg.Logger})),
		store:       st,
		perms:       newPermissions(cfg.AllowedUsers, cfg.AllowedChannels, cfg.Admins),
		seen:        seen,
		unsandboxed: cfg.SandboxLevel == "none",
	}
	b.reg = newRegistry(b)
	b.ackWork = make(chan struct{}, ackWorkers)
	if cfg.MaxConcurrentRuns > 0 {
		b.runSlots = make(chan struct{}, cfg.MaxConcurrentRuns)
	}
	b.runCtx, b.cancelRuns = context.WithCancel(context.Background())
	b.bg = context.Background()
	return b, nil
}

// Run connects to Slack and serves until ctx is cancelled; then it stops
// the socket, cancels runs in flight, waits for every session to persist
// its state and returns nil. It returns an error when Slack refuses the
// tokens or the socket client gives up. Run may be called once.
func (b *Bot) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	defer b.shutdown()
	auth, err := b.api.c.AuthTestContext(ctx)
	switch {
	case err == nil:
		b.botUserID, b.teamID = auth.UserID, auth.TeamID
	case tokenRefused(err):
		return fmt.Errorf("checking the bot token (auth.test): %w", err)
	default:
		// Slack is flaky or the endpoint lacks auth.test: go on. Own posts
		// still carry a bot_id and app_mention events still arrive.
		b.log.Warn("auth.test failed; continuing without the bot's user id", "err", err)
		auth = &slack.AuthTestResponse{}
	}
	if b.cfg.SandboxWarning != "" {
		b.log.Warn("workspaces are not sandboxed", "why", b.cfg.SandboxWarning)
	}
	b.log.Info("h9 bot starting", "bot_user", b.botUserID, "team", auth.TeamID)
	b.recoverSessions()
	b.seen.start()

	sockCtx, cancelSock := context.WithCancel(ctx)
	defer cancelSock()
	sockErr := make(chan error, 1)
	go func() { sockErr <- b.sm.RunContext(sockCtx) }()
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); b.socketLoop(sockCtx) }()

	select {
	case <-ctx.Done():
		err = nil
	case err = <-sockErr:
		if err != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("socket mode: %w", err)
		} else {
			err = nil
		}
	}
	cancelSock()
	<-loopDone
	return err
}

// sessionTeam is the team part of session ids: the bot's own team from
// auth.test, never a payload's team_id. Payloads disagree about it (a slash
// command, an event and a click for one thread need not all carry it, and
// shared channels report the sender's team), and a thread's session must be
// found from any of them. When auth.test could not tell, it is "" for all.
func (b *Bot) sessionTeam() string { return b.teamID }

// shutdown stops new work, cancels runs and waits until every actor has
// saved its session and every checklist has flushed.
func (b *Bot) shutdown() {
	b.stopping.Store(true)
	b.seen.close() // the socket loop has stopped: nothing new to remember
	b.cancelRuns()
	done := make(chan struct{})
	go func() { b.reg.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		b.log.Warn("shutdown: sessions still busy after grace period")
	}
	b.log.Info("h9 bot stopped")
}

// shutdownGrace bounds how long Run waits for sessions to settle.
const shutdownGrace = 30 * time.Second

// ackWorkers bounds the commands doing their post-ack work at once.
const ackWorkers = 16

// slogPrinter routes the socketmode client's log lines to slog at debug.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Output(_ int, s string) error {
	p.l.Debug(s, "component", "socketmode")
	return nil
}

// tokenRefused reports whether Slack rejected the token itself, as opposed
// to a transient or unsupported call.
func tokenRefused(err error) bool {
	switch slackErrorCode(err) {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type":
		return true
	}
	return false
}

// Package bot is h9's Slack app: Socket Mode envelopes in, one actor per
// active thread running the session state machine (machine.go), the live
// checklist, the review buttons and the Planning module's auto-run loop, all
// persisted through its Store.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/h9-app/h9/bot/automation"
	"github.com/h9-app/h9/bot/follow"
	"github.com/h9-app/h9/bot/slackapi"
)

// Bot is a running Slack app. Make one with New, then call Run.
type Bot struct {
	cfg     Config
	log     *slog.Logger
	api     *slackapi.Client
	sm      *socketmode.Client
	store   Store
	leases  Leases
	fleet   Fleet // nil: this process is the only one
	perms   permissions
	seen    *dedup
	claims  *claimer // nil: one process, dedup in memory
	reg     *registry
	follows *follow.Poller[threadKey] // knocks on the followed requests this replica holds (following.go)

	idents identities   // users.info names and emails, for Co-authored-by
	files  *http.Client // downloads of files shared in threads
	known  knownThreads // threads seen holding a session (storeaway.go)

	unsandboxed bool
	runSlots    chan struct{} // nil = unbounded
	work        *workQueue    // commands' work after their ack (tasks.go)
	tasks       *tasks        // every goroutine the bot starts outside its actors

	botUserID string // from auth.test; mentions are "<@botUserID>"
	teamID    string // from auth.test; "" when unknown (see sessionTeam)

	// runCtx parents every agent run; cancelled only by shutdown, so that
	// runs outlive one envelope and end together.
	runCtx     context.Context
	cancelRuns context.CancelFunc
	bg         context.Context    // Slack and store calls: survives Run's ctx so final edits land
	hardStop   context.CancelFunc // cancels bg: shutdown's last resort after its grace
	grace      time.Duration      // shutdownGrace; shorter in tests
	stopping   atomic.Bool
	started    atomic.Bool
	connected  atomic.Bool // Socket Mode is connected (Connected)
	metrics    Metrics
	autos      *automation.Engine    // nil: no automations (automations.go)
	repoAutos  *automation.RepoFiles // nil: no repository's file is read
	fleetDone  sync.WaitGroup        // adoptLoop
}

// New checks cfg and builds the bot; it does not connect (Run does).
func New(cfg Config) (*Bot, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg = withDeadlines(cfg)
	seen, err := newDedup(cfg.Store, cfg.Logger)
	if err != nil {
		return nil, err
	}
	api := slackapi.New(cfg.BotToken, cfg.AppToken, cfg.APIURL, cfg.Logger, cfg.Metrics)
	api.EditBudget = editsPerInterval
	b := &Bot{
		cfg:         cfg,
		log:         cfg.Logger,
		api:         api,
		sm:          socketmode.New(api.Slack(), socketmode.OptionLog(slogPrinter{cfg.Logger})),
		store:       cfg.Store,
		leases:      cfg.Leases,
		fleet:       cfg.Fleet,
		perms:       newPermissions(cfg.AllowedUsers, cfg.AllowedChannels, cfg.Admins),
		seen:        seen,
		unsandboxed: cfg.SandboxLevel == "none",
		metrics:     cfg.Metrics,
		files:       &http.Client{Transport: slackapi.Transport()},
	}
	b.reg = newRegistry(b)
	b.follows = follow.NewPoller(cfg.ForgePoll, func(k threadKey) bool {
		if b.stopping.Load() {
			return false
		}
		b.reg.deliver(k, msgFollowPoll{})
		return true
	})
	if cfg.Fleet != nil {
		b.claims = newClaimer(cfg.Store, cfg.Logger)
	}
	cfg.Leases.OnLeaseLost(b.onLeaseLost)
	b.work, b.tasks = newWorkQueue(receiveQueue), newTasks()
	if cfg.MaxConcurrentRuns > 0 {
		b.runSlots = make(chan struct{}, cfg.MaxConcurrentRuns)
	}
	b.runCtx, b.cancelRuns = context.WithCancel(context.Background())
	b.bg, b.hardStop = context.WithCancel(context.Background())
	b.grace = shutdownGrace
	if err := b.newAutomations(); err != nil {
		return nil, err
	}
	return b, nil
}

// authTestTimeout bounds auth.test at start: a Slack that does not answer
// it is treated as one that failed it (h9 goes on without its user id).
const authTestTimeout = 30 * time.Second

// Run connects to Slack and serves until ctx is cancelled; then it stops
// the socket, cancels runs in flight, waits for every session to persist
// its state and returns nil. It returns an error when Slack refuses the
// tokens or the socket client gives up. Run may be called once.
func (b *Bot) Run(ctx context.Context) error {
	if !b.started.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	defer b.shutdown()
	began := time.Now() // a start recorded before is an earlier process's (starts.go)
	actx, cancel := context.WithTimeout(ctx, authTestTimeout)
	auth, err := b.api.Slack().AuthTestContext(actx)
	cancel()
	switch {
	case err == nil:
		b.botUserID, b.teamID = auth.UserID, auth.TeamID
	case tokenRefused(err):
		return fmt.Errorf("checking the bot token (auth.test): %w: %w", ErrBotTokenRefused, err)
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
	sockCtx, cancelSock := context.WithCancel(ctx)
	defer cancelSock()
	b.recoverSessions(sockCtx)
	b.seen.start()

	b.work.start(b.tasks, ackWorkers)
	sockErr := make(chan error, 1)
	b.tasks.spawn(func() { sockErr <- b.sm.RunContext(sockCtx) })
	loopDone := make(chan struct{})
	b.tasks.spawn(func() { defer close(loopDone); b.socketLoop(sockCtx) })
	if b.claims != nil {
		b.fleetDone.Go(func() { b.claims.run(sockCtx) })
	}
	if b.cfg.Forges != nil {
		b.fleetDone.Go(func() { b.follows.Run(sockCtx) })
	}
	b.fleetDone.Go(func() { b.startsLoop(sockCtx, began) })
	if b.autos != nil {
		b.fleetDone.Go(func() { _ = b.autos.Run(sockCtx) })
	}
	if b.repoAutos != nil {
		b.fleetDone.Go(func() { b.repoAutos.Run(sockCtx) })
	}

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
	b.connected.Store(false)
	b.fleetDone.Wait()
	return err
}

// Connected reports whether Socket Mode is connected now: from Slack's
// hello until the connection drops, Slack asks to reconnect, or Run ends.
// While it is false, Slack cannot deliver to this process.
func (b *Bot) Connected() bool { return b.connected.Load() }

// sessionTeam is the team part of new session ids: the bot's own team
// from auth.test, never a payload's team_id (payloads disagree about it),
// and "" when auth.test could not tell. Sessions are found by thread, so
// the team a session was made with does not matter afterwards.
func (b *Bot) sessionTeam() string { return b.teamID }

// recoverSessions hands every session that was running or waiting for a
// step approval to its actor. Other sessions need nothing: their buttons
// work from the store. In a fleet, the sessions other replicas hold are
// theirs: this replica adopts those without a holder, now and from then
// on (adoptLoop), and listens for what other replicas post to its
// sessions' inboxes.
func (b *Bot) recoverSessions(ctx context.Context) {
	if b.fleet != nil {
		b.fleet.OnInbox(b.onInbox)
		b.adoptOrphans(ctx)
		b.fleetDone.Go(func() { b.adoptLoop(ctx) })
		return
	}
	active, err := b.store.ListActive(b.bg)
	if err != nil {
		b.log.Error("recovering sessions", "err", err)
		return
	}
	if len(active) > 0 {
		b.log.Info("recovering sessions", "count", len(active))
	}
	for _, m := range active {
		b.reg.deliver(threadKey{channel: m.Channel, ts: m.Thread}, msgRecover{})
	}
}

// shutdown stops the bot in an order that leaves nothing running when it
// returns, so that the caller may close the store:
//  1. Run has stopped the socket loop and the claimer: no new delivery;
//  2. the dedup flusher claims what is pending and stops;
//  3. runs in flight are cancelled (their actors save what they did);
//  4. the work queue is closed: its workers finish what was admitted;
//  5. the actors are told to stop and each saves its session;
//  6. every other goroutine of the bot ends (checklist flushes, saves,
//     ephemerals, the socket client).
//
// Steps 4–6 have shutdownGrace together; past it, every call still waiting
// on the store or Slack is cancelled, and shutdown waits for them to end
// (each call has a deadline of its own besides).
func (b *Bot) shutdown() {
	b.stopping.Store(true)
	b.seen.close() // the socket loop has stopped: nothing new to remember
	b.cancelRuns()
	b.work.close()
	done := make(chan struct{})
	go func() { b.reg.wait(); <-b.tasks.drained(); close(done) }()
	select {
	case <-done:
	case <-time.After(b.grace):
		b.log.Warn("shutdown: sessions still busy after grace period; cancelling their calls")
		b.hardStop()
		<-done
	}
	b.hardStop()
	b.api.CloseIdleConnections()
	b.log.Info("h9 bot stopped")
}

// shutdownGrace bounds how long Run waits for sessions to wind down.
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
	switch slackapi.ErrorCode(err) {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type":
		return true
	}
	return false
}

// Sentinel errors. New wraps the config ones with the field at fault; match
// with errors.Is.
var (
	// ErrInvalidConfig: New was given a Config missing a required field or
	// with a malformed one.
	ErrInvalidConfig = errors.New("invalid bot config")
	// ErrStore: reading or writing the bot's records failed, or one does
	// not decode.
	ErrStore = errors.New("bot store failed")
	// ErrUnknownState: a session record holds a state this h9 does not know
	// (a newer h9 wrote it). The session is left alone: nothing acts on it
	// or writes it, and the rest goes on.
	ErrUnknownState = errors.New("session state unknown to this h9")
	// ErrBotTokenRefused: Slack refused the bot token at start (auth.test).
	ErrBotTokenRefused = errors.New("the bot token was refused")

	// errNoRepos: a session has a repository but h9 now has none configured.
	errNoRepos = errors.New("h9 has no repositories configured any more")
	// errDiffTooLarge: a session's diff is past what h9 uploads.
	errDiffTooLarge = errors.New("diff too large")
)

package automation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/workspace/forge"
)

// Store is what the engine keeps in the store (agent/store's automation
// records; both backends implement it).
type Store interface {
	RecordOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, bool, error)
	Occurrence(ctx context.Context, automation, key string) (store.Occurrence, error)
	UpdateOccurrence(ctx context.Context, o store.Occurrence) (store.Occurrence, error)
	ClaimOccurrences(ctx context.Context, state store.OccurrenceState, before time.Time, owner string, now time.Time, limit int) ([]store.Occurrence, error)
	Occurrences(ctx context.Context, automation string, state store.OccurrenceState, limit int) ([]store.Occurrence, error)
	SettledOccurrences(ctx context.Context, from, before time.Time, limit int) ([]store.Occurrence, error)
	ForgetOccurrences(ctx context.Context, olds []store.Occurrence) (int, error)
	AutomationState(ctx context.Context, name string) (store.AutomationState, error)
	AutomationStates(ctx context.Context) ([]store.AutomationState, error)
	PutAutomationState(ctx context.Context, st store.AutomationState) (store.AutomationState, error)
	AddAutomationSpend(ctx context.Context, name, day string, tokens int64) (int64, error)
	// Shared reports whether other processes write the store too (a
	// fleet's replicas): then overlap's slot is taken there (overlap.go).
	Shared() bool
}

// Bot is what the engine asks of the Slack side.
type Bot interface {
	// StartSession posts the session's root message (in Thread when set:
	// the matched message's thread) and starts it; the session's thread
	// comes back.
	StartSession(ctx context.Context, s StartRequest) (Started, error)
	// Post says text in channel (in thread when set); resume names an
	// automation whose Resume button goes with it, "" for none.
	Post(ctx context.Context, channel, thread, text, resume string) error
	// SessionOpen reports whether the session in the thread is open (not
	// done, stalled or cancelled).
	SessionOpen(ctx context.Context, channel, thread string) (bool, error)
	// Permalink is a link to the message at ts in channel, for a message
	// trigger's source; it falls back to a built link, never fails.
	Permalink(ctx context.Context, channel, ts string) string
}

// StartRequest is a session an occurrence starts.
type StartRequest struct {
	Automation string `json:"automation"`
	Key        string `json:"key"` // the occurrence's: a start is idempotent on it
	Owner      string `json:"owner,omitempty"`
	Channel    string `json:"channel"`
	Thread     string `json:"thread,omitempty"` // message trigger: the matched message's ts
	Repo       string `json:"repo,omitempty"`
	Mode       Mode   `json:"mode"`
	Task       string `json:"task"`    // the operator's words, for the root message
	Request    string `json:"request"` // the task, then the data fenced
	Source     string `json:"source"`  // a link to the source, or "webhook", "schedule"
	Budget     int64  `json:"budget,omitempty"`
	Trigger    Kind   `json:"trigger"`
	// Issue is the issue an issue trigger's session closes: its pull/merge
	// request says `Closes #<Issue>` (0: none).
	Issue       int    `json:"issue,omitempty"`
	DedupeShown string `json:"dedupe_shown,omitempty"`
	// Retry: an earlier start of this occurrence may have posted its root
	// message before its process stopped (the sweep's second try).
	Retry bool `json:"-"`
}

// Started is a started session's thread.
type Started struct{ Channel, Thread, Link string }

// Options are an engine's parts.
type Options struct {
	Config  Config
	Store   Store
	Bot     Bot
	Log     *slog.Logger
	Replica string // this process's name in claims
	// Count adds one to h9_automation_fires_total (nil: not counted).
	Count func(automation string, trigger Kind, outcome string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Timeout bounds each store and Slack call (default 20s).
	Timeout time.Duration
	// Forges reads the issue and check triggers' repositories (nil: those
	// triggers do nothing); Poll is H9_FORGE_POLL (0 = DefaultPoll).
	Forges Forges
	Poll   time.Duration
	// Alone: no other process uses the store (no fleet), so what an
	// earlier process left recorded is taken at start, not after claimAge.
	Alone bool
}

// Engine fires the automations: one timer for every schedule, the
// webhook, message and manual triggers, and a sweep that finishes what a
// stopped replica recorded (ARCHITECTURE.md, "Automations").
type Engine struct {
	o Options

	mu     sync.Mutex
	bySrc  map[string][]*Automation // by Source.File
	byName map[string]*Automation
	next   map[string]time.Time // schedule automations' next occurrence
	wake   chan struct{}
	// threads names the automation of each session thread it started
	// (channel/thread → name), for daily_budget's spend.
	threads map[string]string
	// edits coalesces the edits of each automation's state (stateedits.go).
	edits stateEdits
	// recent is each automation's last session started here whose record
	// is on its way (start); after owns the goroutines recording them.
	recent map[string]*lastStart
	after  sync.WaitGroup
	// starting names the automations whose start is under way here;
	// begun counts each automation's starts here (overlap.go).
	starting map[string]bool
	begun    map[string]int64
	// shared: other processes write the store (a fleet's replicas), so
	// a start takes the automation's session slot there too.
	shared bool
	// fireAtOnce is the due schedules fired at once (0: fireAtOnce).
	fireAtOnce int
	// everyTurn: every turn is this replica's (claimTurn), as before
	// turns were claimed; the benchmarks' baseline.
	everyTurn bool
	// began is when this engine was made: an occurrence recorded before
	// was an earlier process's, whose root message may be posted.
	began time.Time
	// prunes paces the pruning of settled occurrences (prune.go).
	prunes pruning
}

// Thresholds of the engine.
const (
	// pauseAfter failed starts in a row pause an automation.
	pauseAfter = 3
	// sweepEvery is how often recorded occurrences left by a stopped
	// process, and queued ones, are looked at.
	sweepEvery = 30 * time.Second
	// claimAge is how long a recorded occurrence may wait for its start
	// before another replica takes it on: past the start's own deadlines.
	claimAge = 3 * time.Minute
)

// NewEngine makes an engine with no automations; Set gives it some.
func NewEngine(o Options) *Engine {
	o.Config = o.Config.WithDefaults()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.Count == nil {
		o.Count = func(string, Kind, string) {}
	}
	return &Engine{o: o, bySrc: map[string][]*Automation{}, byName: map[string]*Automation{},
		next: map[string]time.Time{}, wake: make(chan struct{}, 1), threads: map[string]string{}, recent: map[string]*lastStart{},
		starting: map[string]bool{}, begun: map[string]int64{}, shared: o.Store.Shared(), began: o.Now()}
}

// Set replaces the automations of one source (the operator's file, or a
// repository's). A name another source already uses is refused.
func (e *Engine) Set(source string, list []*Automation) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range list {
		if old, ok := e.byName[a.Name]; ok && old.Source.File != source {
			return fmt.Errorf("%w: %s: automation %q is also defined in %s", ErrInvalid, source, a.Name, old.Source.File)
		}
	}
	for _, a := range e.bySrc[source] {
		delete(e.byName, a.Name)
		delete(e.next, a.Name)
	}
	e.bySrc[source] = list
	for _, a := range list {
		e.byName[a.Name] = a
	}
	e.poke()
	return nil
}

// Get is the automation named name, nil if none.
func (e *Engine) Get(name string) *Automation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byName[name]
}

// All lists the automations by name.
func (e *Engine) All() []*Automation {
	e.mu.Lock()
	out := make([]*Automation, 0, len(e.byName))
	for _, a := range e.byName {
		out = append(out, a)
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(x, y *Automation) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Engine) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, e.o.Timeout)
}

// occurrence is one occurrence on its way.
type occurrence struct {
	a      *Automation
	key    string
	dedupe string
	req    StartRequest
	// again is what a repeat says in the open thread.
	again string
	// manual: /h9 automations run, which fires paused or not.
	manual bool
	// answer: someone waits for the outcome (a webhook's sender): what
	// is recorded after the session started is recorded after the answer.
	answer bool
}

func (e *Engine) newRequest(a *Automation, key string) StartRequest {
	return StartRequest{Automation: a.Name, Key: key, Owner: a.Owner, Channel: a.Channel, Repo: a.Repo, Mode: a.Mode,
		Task: a.Task, Request: a.Task, Source: string(a.Trigger.Kind), Budget: a.Budget, Trigger: a.Trigger.Kind}
}

// fire records an occurrence and, when this call recorded it, starts its
// session. err is only for what kept it from being recorded.
func (e *Engine) fire(ctx context.Context, oc occurrence) (Outcome, error) {
	a := oc.a
	now := e.o.Now()
	data, err := json.Marshal(oc.req)
	if err != nil {
		return Outcome{}, err
	}
	rec := store.Occurrence{Automation: a.Name, Key: oc.key, Dedupe: oc.dedupe, State: store.OccurrenceRecorded,
		Data: data, Recorded: now, Owner: e.o.Replica, Claimed: now}
	cctx, cancel := e.ctx(ctx)
	got, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
	cancel()
	if err != nil {
		return Outcome{}, err
	}
	if !inserted {
		out, again, err := e.repeat(ctx, oc, got, rec)
		if err != nil || !again {
			if out.Result == ResultDeduplicated {
				e.o.Count(a.Name, a.Trigger.Kind, ResultDeduplicated) // every duplicate, once
			}
			return out.Outcome, err
		}
		got = out.occ
	}
	return e.start(ctx, a, got, oc.manual, oc.answer), nil
}

// repeatOutcome carries a repeat's answer, or the occurrence taken anew.
type repeatOutcome struct {
	Outcome
	occ store.Occurrence
}

// repeat handles a key already recorded: a duplicate (a redelivery, a
// replay, another replica), an "Again" in the open thread, or a dedupe
// key whose session closed, which fires anew.
func (e *Engine) repeat(ctx context.Context, oc occurrence, old, rec store.Occurrence) (repeatOutcome, bool, error) {
	e.mu.Lock()
	r, onItsWay := e.recent[oc.a.Name]
	e.mu.Unlock()
	onItsWay = onItsWay && r.key == old.Key && old.State == store.OccurrenceRecorded
	dup := repeatOutcome{Outcome: Outcome{Result: ResultDeduplicated}}
	if onItsWay {
		// Started here, its record on its way (start).
		dup.Link = e.link(ctx, r.channel, r.thread)
	} else {
		dup.Link = e.link(ctx, old.Channel, old.Thread)
	}
	if oc.dedupe == "" {
		return dup, false, nil
	}
	if onItsWay {
		// What comes next rests on the record: wait for it.
		select {
		case <-r.recorded:
		case <-ctx.Done():
			return repeatOutcome{}, false, ctx.Err()
		}
		cctx, cancel := e.ctx(ctx)
		var err error
		old, err = e.o.Store.Occurrence(cctx, old.Automation, old.Key)
		cancel()
		if err != nil {
			return repeatOutcome{}, false, err
		}
	}
	if old.State.Pending() {
		return dup, false, nil
	}
	open := false
	if old.State == store.OccurrenceStarted && old.Thread != "" {
		cctx, cancel := e.ctx(ctx)
		var err error
		open, err = e.o.Bot.SessionOpen(cctx, old.Channel, old.Thread)
		cancel()
		if err != nil {
			return repeatOutcome{}, false, err
		}
	}
	if open {
		cctx, cancel := e.ctx(ctx)
		err := e.o.Bot.Post(cctx, old.Channel, old.Thread, "Again: "+oc.again, "")
		cancel()
		if err != nil {
			e.o.Log.Warn("saying a repeat in its thread failed", "automation", oc.a.Name, "err", err)
		}
		return dup, false, nil
	}
	// Its session closed (or never started): this repeat fires anew.
	rec.Version = old.Version
	cctx, cancel := e.ctx(ctx)
	taken, err := e.o.Store.UpdateOccurrence(cctx, rec)
	cancel()
	if errors.Is(err, store.ErrNotFound) {
		// Pruned since it was read (prune.go): recorded anew, once.
		var inserted bool
		cctx, cancel := e.ctx(ctx)
		taken, inserted, err = e.o.Store.RecordOccurrence(cctx, rec)
		cancel()
		if err == nil && !inserted {
			return dup, false, nil
		}
	}
	if errors.Is(err, store.ErrConflict) {
		return dup, false, nil // another replica took it
	}
	if err != nil {
		return repeatOutcome{}, false, err
	}
	return repeatOutcome{occ: taken}, true, nil
}

// link is a thread's permalink, "" when there is no thread; a slack://
// link when the bot gives none.
func (e *Engine) link(ctx context.Context, channel, thread string) string {
	if thread == "" {
		return ""
	}
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	if l := e.o.Bot.Permalink(cctx, channel, thread); l != "" {
		return l
	}
	return "slack://" + channel + "/" + thread
}

// start starts a recorded occurrence this replica holds, and records what
// became of it. With answer, that record is made after start returns (a
// webhook's answer waits for the occurrence's record and its root
// message, not for the bookkeeping after them): until it is, the started
// session is known in memory (recent), and a stop before it is the case
// the sweep's retry covers, as a stop just after the root message is.
func (e *Engine) start(ctx context.Context, a *Automation, occ store.Occurrence, manual, answer bool) Outcome {
	var req StartRequest
	if err := json.Unmarshal(occ.Data, &req); err != nil {
		return e.failed(ctx, a, occ, "its occurrence's record cannot be read")
	}
	req.Retry = occ.Owner != "" && (occ.Recorded.Before(occ.Claimed.Add(-time.Second)) || occ.Recorded.Before(e.began))
	st, err := e.state(ctx, a.Name)
	if err != nil {
		return e.leave(a, occ, err)
	}
	today := a.Day(e.o.Now())
	switch {
	case st.Paused && !manual:
		return e.settle(ctx, a, occ, store.OccurrenceSkipped, "it is paused", ResultSkipped)
	case a.Broken != "":
		return e.failed(ctx, a, occ, a.Broken)
	case a.DailyBudget > 0 && st.Day == today && st.Spent >= a.DailyBudget:
		return e.failed(ctx, a, occ, fmt.Sprintf("its daily budget of %d tokens is spent", a.DailyBudget))
	}
	// overlap (overlap.go): the previous session open, or another start
	// of the automation under way, and this one does not start.
	slot, open, err := e.takeSlot(ctx, a.Name, occ.Key, st)
	if err != nil {
		return e.leave(a, occ, err)
	}
	if open {
		if occ.State == store.OccurrenceQueued {
			return Outcome{Result: ResultQueued} // it stays queued: a later sweep
		}
		state, cause, result := store.OccurrenceSkipped, "its previous session is still open", ResultSkipped
		if a.Overlap == OverlapQueue {
			state, cause, result = store.OccurrenceQueued, "", ResultQueued
		}
		if answer {
			e.after.Go(func() { e.settle(context.WithoutCancel(ctx), a, occ, state, cause, result) })
			return Outcome{Result: result, Why: cause}
		}
		return e.settle(ctx, a, occ, state, cause, result)
	}
	cctx, cancel := e.ctx(ctx)
	s, err := e.o.Bot.StartSession(cctx, req)
	cancel()
	if err != nil {
		e.started(a.Name, nil)
		return e.failed(ctx, a, occ, oneLine(err.Error()), slot.release(st))
	}
	occ.State, occ.Channel, occ.Thread, occ.Cause = store.OccurrenceStarted, s.Channel, s.Thread, ""
	last := &lastStart{key: occ.Key, channel: s.Channel, thread: s.Thread, recorded: make(chan struct{})}
	e.started(a.Name, last)
	e.o.Count(a.Name, a.Trigger.Kind, ResultStarted)
	record := func(ctx context.Context) {
		e.update(ctx, a, occ)
		e.editState(ctx, a.Name, func(st *store.AutomationState) {
			st.Failures, st.LastCause = 0, ""
			if e.latest(a.Name, last, slot, st) {
				st.LastKey, st.LastChannel, st.LastThread = occ.Key, s.Channel, s.Thread
			}
		})
		e.mu.Lock()
		if e.recent[a.Name] == last {
			delete(e.recent, a.Name) // the store says it now
		}
		e.mu.Unlock()
		close(last.recorded)
	}
	if answer {
		e.after.Go(func() { record(context.WithoutCancel(ctx)) })
	} else {
		record(ctx)
	}
	return Outcome{Result: ResultStarted, Link: s.Link}
}

// leave leaves an occurrence recorded when the store or Slack could not
// be asked: the sweep tries again.
func (e *Engine) leave(a *Automation, occ store.Occurrence, err error) Outcome {
	e.o.Log.Warn("an automation's occurrence waits for the next sweep", "automation", a.Name, "key", occ.Key, "err", err)
	return Outcome{Result: ResultQueued, Why: "h9 will try again shortly"}
}

// settle records an occurrence's end that is not a start.
func (e *Engine) settle(ctx context.Context, a *Automation, occ store.Occurrence, state store.OccurrenceState, cause, result string) Outcome {
	occ.State, occ.Cause = state, cause
	e.update(ctx, a, occ)
	if result != ResultQueued {
		e.o.Count(a.Name, a.Trigger.Kind, result)
	}
	return Outcome{Result: result, Why: cause}
}

// failed records a failed start and says it once per cause; the third
// in a row pauses the automation, said with Resume. also are edits of
// the state saved with the failure's (a slot given back).
func (e *Engine) failed(ctx context.Context, a *Automation, occ store.Occurrence, why string, also ...func(*store.AutomationState)) Outcome {
	out := e.settle(ctx, a, occ, store.OccurrenceFailed, why, ResultFailed)
	e.sayFailed(ctx, a, why, also...)
	return out
}

// pollFailed: a forge refusing a poll (401, 403, 404: the token or the
// repository, which no retry mends) is a failed start, said once per
// cause and counted toward the pause; anything else (a 5xx, a rate limit,
// the network) is tried again at the next poll, quietly.
func (e *Engine) pollFailed(ctx context.Context, a *Automation, err error) {
	var refused *forge.Error
	var limited *forge.RateLimited
	if errors.As(err, &limited) || !errors.As(err, &refused) ||
		refused.Status != http.StatusUnauthorized && refused.Status != http.StatusForbidden && refused.Status != http.StatusNotFound {
		e.o.Log.Warn("polling an automation's forge failed; the next poll tries again", "automation", a.Name, "err", err)
		return
	}
	e.o.Count(a.Name, a.Trigger.Kind, ResultFailed)
	e.sayFailed(ctx, a, "the forge refused: "+slackEscape(oneLine(refused.Error())))
}

// sayFailed counts a failed start toward the pause (also: edits saved
// with it) and says its cause once; the third in a row pauses the
// automation, said with Resume.
func (e *Engine) sayFailed(ctx context.Context, a *Automation, why string, also ...func(*store.AutomationState)) {
	var say, pause bool
	e.editState(ctx, a.Name, func(st *store.AutomationState) {
		for _, edit := range also {
			edit(st)
		}
		st.Failures++
		say = st.LastCause != why
		st.LastCause = why
		if st.Failures >= pauseAfter && !st.Paused {
			st.Paused, st.PausedBy, st.PausedAt = true, "h9", e.o.Now()
			pause = true
		}
	})
	if say {
		e.post(ctx, a, fmt.Sprintf("h9 could not start *%s*: %s", a.Name, why), "")
	}
	if pause {
		e.post(ctx, a, fmt.Sprintf("*%s* is paused: its last %d starts failed. Resume it once the cause is fixed.", a.Name, pauseAfter), a.Name)
	}
}

func (e *Engine) post(ctx context.Context, a *Automation, text, resume string) {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	if err := e.o.Bot.Post(cctx, a.Channel, "", text, resume); err != nil {
		e.o.Log.Warn("posting in an automation's channel failed", "automation", a.Name, "err", err)
	}
}

func (e *Engine) update(ctx context.Context, a *Automation, occ store.Occurrence) {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	if _, err := e.o.Store.UpdateOccurrence(cctx, occ); err != nil {
		e.o.Log.Warn("recording an occurrence's outcome failed", "automation", a.Name, "key", occ.Key, "state", occ.State, "err", err)
	}
}

// state reads an automation's state, an empty one when none is stored.
func (e *Engine) state(ctx context.Context, name string) (store.AutomationState, error) {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	st, err := e.o.Store.AutomationState(cctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.AutomationState{Name: name}, nil
	}
	return st, err
}

package automation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// Run fires the schedules and sweeps what was left recorded or queued
// until ctx ends. One timer serves every schedule: it is set to the
// earliest next occurrence and reset when the automations change.
func (e *Engine) Run(ctx context.Context) error {
	defer e.after.Wait()
	e.learnThreads(ctx)
	if e.o.Alone {
		e.takeLeft(ctx)
	}
	e.catchUp(ctx)
	timer := time.NewTimer(0)
	defer timer.Stop()
	sweep := time.NewTicker(sweepEvery)
	defer sweep.Stop()
	poll := time.NewTicker(e.o.Poll)
	defer poll.Stop()
	e.pollForges(ctx)
	for {
		due := e.fireDue(ctx)
		if !due.IsZero() {
			timer.Reset(max(due.Sub(e.o.Now()), 0))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-e.wake:
			e.catchUp(ctx)
		case <-sweep.C:
			e.Sweep(ctx)
		case <-poll.C:
			e.pollForges(ctx)
		}
	}
}

// catchUp gives each schedule it has not seen yet its next occurrence,
// after firing once the latest one an outage missed (ARCHITECTURE.md,
// "Automations": if under 24 h old; the channel is told how many were
// skipped).
func (e *Engine) catchUp(ctx context.Context) {
	now := e.o.Now()
	for _, a := range e.All() {
		if a.schedule == nil {
			continue
		}
		e.mu.Lock()
		_, known := e.next[a.Name]
		e.mu.Unlock()
		if known {
			continue
		}
		st, err := e.state(ctx, a.Name)
		if err != nil {
			e.o.Log.Warn("reading a schedule's state failed; it starts from now", "automation", a.Name, "err", err)
		}
		if st.Version == 0 || st.LastFired.IsZero() {
			// First load: no backfill; the watermark starts now.
			e.editState(ctx, a.Name, func(s *store.AutomationState) {
				if s.FirstLoaded.IsZero() {
					s.FirstLoaded = now
				}
				if s.LastFired.IsZero() {
					s.LastFired = now
				}
			})
		} else if m := a.schedule.Missed(st.LastFired, now); !m.Latest.IsZero() {
			if m.Skipped > 0 {
				e.saySkipped(ctx, a, m)
			}
			if !m.Fire.IsZero() {
				e.fireSchedule(ctx, a, m.Fire)
			} else {
				e.watermark(ctx, a, m.Latest)
			}
		}
		e.mu.Lock()
		e.next[a.Name] = a.schedule.Next(now)
		e.mu.Unlock()
	}
}

// saySkipped tells the channel once (keyed as an occurrence) how many
// occurrences an outage skipped.
func (e *Engine) saySkipped(ctx context.Context, a *Automation, m Missed) {
	rec := store.Occurrence{Automation: a.Name, Key: "skipped:" + ScheduleKey(m.Latest), State: store.OccurrenceSkipped,
		Recorded: e.o.Now(), Owner: e.o.Replica, Cause: "missed while h9 was down"}
	cctx, cancel := e.ctx(ctx)
	_, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
	cancel()
	if err != nil || !inserted {
		return
	}
	n := fmt.Sprint(m.Skipped)
	if m.More {
		n = "over " + n
	}
	e.o.Count(a.Name, KindSchedule, ResultSkipped)
	e.post(ctx, a, fmt.Sprintf("*%s* missed %s occurrences while h9 was down; they are skipped.", a.Name, n), "")
}

// fireAtOnce bounds the schedules fired at once: as many as the bbolt
// store's group commit takes in one transaction, so that a thousand due
// in the same minute are recorded in a few commits, not a few hundred.
const fireAtOnce = 128

// fireDue fires the schedules due now and returns the earliest next one.
func (e *Engine) fireDue(ctx context.Context) time.Time {
	now := e.o.Now()
	var due []*Automation
	var at []time.Time
	var earliest time.Time
	e.mu.Lock()
	for name, next := range e.next {
		if next.IsZero() {
			continue
		}
		if !next.After(now) {
			a := e.byName[name]
			due = append(due, a)
			at = append(at, next)
			next = a.schedule.Next(now)
			e.next[name] = next
		}
		if earliest.IsZero() || next.Before(earliest) {
			earliest = next
		}
	}
	e.mu.Unlock()
	// Fired side by side (a bounded number at once): the store's group
	// commit serves them together, and one slow start delays no other.
	var wg sync.WaitGroup
	slots := make(chan struct{}, cmp.Or(e.fireAtOnce, fireAtOnce))
	for i, a := range due {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			e.fireSchedule(ctx, a, at[i])
		})
	}
	wg.Wait()
	return earliest
}

func (e *Engine) fireSchedule(ctx context.Context, a *Automation, at time.Time) {
	key := ScheduleKey(at)
	req := e.newRequest(a, key)
	req.Source = "schedule `" + a.Trigger.Schedule + "` (" + at.In(a.zone()).Format("Mon 2 Jan 15:04 MST") + ")"
	if _, err := e.fire(ctx, occurrence{a: a, key: key, req: req}); err != nil {
		e.o.Log.Warn("recording a schedule's occurrence failed", "automation", a.Name, "at", at, "err", err)
		return // the watermark stays: a restart catches it up
	}
	e.watermark(ctx, a, at)
}

func (e *Engine) watermark(ctx context.Context, a *Automation, at time.Time) {
	e.editState(ctx, a.Name, func(s *store.AutomationState) {
		if at.After(s.LastFired) {
			s.LastFired = at
		}
	})
}

// Sweep starts what a stopped replica left recorded past claimAge, and
// the queued occurrences whose automation's session closed, then prunes
// old settled occurrences when it is time to (prune.go).
func (e *Engine) Sweep(ctx context.Context) {
	now := e.o.Now()
	cctx, cancel := e.ctx(ctx)
	left, err := e.o.Store.ClaimOccurrences(cctx, store.OccurrenceRecorded, now.Add(-claimAge), e.o.Replica, now, 50)
	cancel()
	if err != nil {
		e.o.Log.Warn("claiming occurrences left behind failed", "err", err)
	}
	for _, occ := range left {
		if a := e.Get(occ.Automation); a != nil {
			e.start(ctx, a, occ, false, false)
		}
	}
	for _, a := range e.All() {
		if a.Overlap != OverlapQueue {
			continue
		}
		cctx, cancel := e.ctx(ctx)
		queued, err := e.o.Store.Occurrences(cctx, a.Name, store.OccurrenceQueued, 1)
		cancel()
		if err != nil || len(queued) == 0 {
			continue
		}
		st, err := e.state(ctx, a.Name)
		if err != nil {
			continue
		}
		occ := queued[0]
		if occ.Owner != "" && occ.Owner != e.o.Replica && now.Sub(occ.Claimed) < claimAge {
			// Another replica took it from the queue and may be starting
			// it: its slot names this very key, which previousOpen reads
			// as this start's own, so only the claim keeps the two apart.
			continue
		}
		if open, err := e.previousOpen(ctx, a.Name, occ.Key, st); err != nil || open {
			continue
		}
		// Take it from the queue (compare-and-swap: one replica does);
		// its start takes the session slot, or leaves it queued.
		occ.Owner, occ.Claimed = e.o.Replica, now
		cctx, cancel = e.ctx(ctx)
		taken, err := e.o.Store.UpdateOccurrence(cctx, occ)
		cancel()
		if err == nil {
			e.start(ctx, a, taken, false, false)
		}
	}
	e.prune(ctx)
}

// takeLeft starts, in a process alone on its store, the occurrences an
// earlier process recorded and never started (it stopped between
// recording one and posting its root message): nothing else can have
// them in flight, so they need not wait for claimAge as in a fleet.
func (e *Engine) takeLeft(ctx context.Context) {
	cctx, cancel := e.ctx(ctx)
	left, err := e.o.Store.ClaimOccurrences(cctx, store.OccurrenceRecorded, e.began, e.o.Replica, e.o.Now(), 50)
	cancel()
	if err != nil {
		e.o.Log.Warn("claiming the occurrences an earlier process left failed; the sweep tries again", "err", err)
	}
	for _, occ := range left {
		if a := e.Get(occ.Automation); a != nil {
			e.o.Log.Info("starting an occurrence a stopped process left recorded", "automation", a.Name, "key", occ.Key)
			e.start(ctx, a, occ, false, false)
		}
	}
}

// Pending reports whether the occurrence is still to be started or
// settled (recorded or queued): the engine's sweep owns its start.
func (e *Engine) Pending(ctx context.Context, automation, key string) (bool, error) {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	o, err := e.o.Store.Occurrence(cctx, automation, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && o.State.Pending(), err
}

// WebhookAutomation is the webhook automation named name, nil if none.
func (e *Engine) WebhookAutomation(name string) *Automation {
	if a := e.Get(name); a != nil && a.Trigger.Kind == KindWebhook {
		return a
	}
	return nil
}

// FireWebhook records a verified delivery and starts its session.
func (e *Engine) FireWebhook(ctx context.Context, a *Automation, d Delivery) (Outcome, error) {
	key, dedupe, err := a.deliveryKey(d)
	if err != nil {
		return e.failNow(ctx, a, "webhook:"+hashKey(d), err.Error())
	}
	req := e.newRequest(a, key)
	req.Source = "webhook"
	if req.Request, err = a.WebhookRequest(d); err != nil {
		return e.failNow(ctx, a, key, err.Error())
	}
	again := "the webhook was delivered again"
	if dedupe != "" {
		again = "the webhook was delivered again for " + slackEscape(dedupe)
	}
	return e.fire(ctx, occurrence{a: a, key: key, dedupe: dedupe, req: req, again: again, answer: true})
}

// failNow records an occurrence that cannot even be put together (a
// template that fails) as failed, said once per cause.
func (e *Engine) failNow(ctx context.Context, a *Automation, key, why string) (Outcome, error) {
	rec := store.Occurrence{Automation: a.Name, Key: key, State: store.OccurrenceRecorded, Recorded: e.o.Now(), Owner: e.o.Replica, Claimed: e.o.Now()}
	cctx, cancel := e.ctx(ctx)
	got, inserted, err := e.o.Store.RecordOccurrence(cctx, rec)
	cancel()
	if err != nil {
		return Outcome{}, err
	}
	if !inserted {
		return Outcome{Result: ResultDeduplicated}, nil
	}
	return e.failed(ctx, a, got, why), nil
}

// permalink is the matched message's link, under the engine's deadline.
func (e *Engine) permalink(ctx context.Context, m Message) string {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	return e.o.Bot.Permalink(cctx, m.Channel, m.TS)
}

// OnMessage fires every message automation m matches; the session starts
// in m's thread. It returns the outcomes, one per automation matched.
func (e *Engine) OnMessage(ctx context.Context, m Message) []Outcome {
	var outs []Outcome
	for _, a := range e.All() {
		if !a.Matches(m) {
			continue
		}
		key, dedupe := a.MessageKeys(m)
		req := e.newRequest(a, key)
		req.Request, req.Thread = a.MessageRequest(m), m.TS
		if req.Channel != m.Channel {
			req.Thread = "" // its sessions start in another channel
		}
		req.Source = "message " + e.permalink(ctx, m)
		o := occurrence{a: a, key: key, req: req, again: "the alert came again: " + slackEscape(firstLine(m.Text()))}
		if dedupe != "" {
			// The message itself once, then the dedupe key's thread.
			o.key, o.dedupe = "dedupe:"+dedupe, dedupe
			if !e.firstTime(ctx, a, key) {
				continue
			}
		}
		out, err := e.fire(ctx, o)
		if err != nil {
			e.o.Log.Warn("recording a message's occurrence failed", "automation", a.Name, "err", err)
			continue
		}
		outs = append(outs, out)
	}
	return outs
}

// firstTime records key as seen and reports whether this call did.
func (e *Engine) firstTime(ctx context.Context, a *Automation, key string) bool {
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	_, inserted, err := e.o.Store.RecordOccurrence(cctx, store.Occurrence{Automation: a.Name, Key: key,
		State: store.OccurrenceDeduplicated, Recorded: e.o.Now(), Owner: e.o.Replica})
	return err == nil && inserted
}

// RunNow fires one occurrence of name now, paused or not (/h9 automations
// run). by is who asked.
func (e *Engine) RunNow(ctx context.Context, name, by string) (Outcome, error) {
	a := e.Get(name)
	if a == nil {
		return Outcome{}, fmt.Errorf("%w: no automation named %q", ErrInvalid, name)
	}
	key := "run:" + e.o.Now().UTC().Format(time.RFC3339Nano)
	req := e.newRequest(a, key)
	req.Source = "run by <@" + by + ">"
	if a.task != nil {
		// A webhook's task over no payload: its fields read empty, as a
		// missing field does.
		t, err := render(a.task, map[string]any{})
		if err != nil {
			return e.failNow(ctx, a, key, err.Error())
		}
		req.Request = t
	}
	return e.fire(ctx, occurrence{a: a, key: key, req: req, manual: true})
}

// SetPaused pauses or resumes name; by is a Slack user ID.
func (e *Engine) SetPaused(ctx context.Context, name, by string, paused bool) error {
	if e.Get(name) == nil {
		return fmt.Errorf("%w: no automation named %q", ErrInvalid, name)
	}
	_, err := e.editState(ctx, name, func(s *store.AutomationState) {
		s.Paused, s.PausedBy, s.PausedAt = paused, by, e.o.Now()
		if !paused {
			s.Failures, s.LastCause, s.PausedBy = 0, "", ""
			s.PausedAt = time.Time{}
		}
	})
	return err
}

// Spent adds tokens an automation's session spent to its day.
func (e *Engine) Spent(ctx context.Context, name string, tokens int64) error {
	a := e.Get(name)
	if a == nil || tokens <= 0 {
		return nil
	}
	cctx, cancel := e.ctx(ctx)
	defer cancel()
	_, err := e.o.Store.AddAutomationSpend(cctx, name, a.Day(e.o.Now()), tokens)
	return err
}

// Entry is one line of /h9 automations.
type Entry struct {
	A        *Automation
	Next     time.Time
	Paused   bool
	PausedBy string
	// LastChannel and LastThread are its last session's thread.
	LastChannel, LastThread string
}

// List lists the automations whose sessions start in channel ("" = all).
func (e *Engine) List(ctx context.Context, channel string) ([]Entry, error) {
	var out []Entry
	now := e.o.Now()
	for _, a := range e.All() {
		if channel != "" && a.Channel != channel && a.Trigger.Watch != channel {
			continue
		}
		st, err := e.state(ctx, a.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{A: a, Next: a.Next(now), Paused: st.Paused, PausedBy: st.PausedBy, LastChannel: st.LastChannel, LastThread: st.LastThread})
	}
	return out, nil
}

func hashKey(d Delivery) string {
	k, _, _ := (&Automation{}).deliveryKey(d)
	return strings.TrimPrefix(k, "webhook:")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// slackEscape keeps data from mentioning or linking in what h9 posts.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// learnThreads remembers each automation's last session thread, for the
// spend of sessions an earlier process started.
func (e *Engine) learnThreads(ctx context.Context) {
	cctx, cancel := e.ctx(ctx)
	states, err := e.o.Store.AutomationStates(cctx)
	cancel()
	if err != nil {
		e.o.Log.Warn("reading the automations' states failed", "err", err)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, st := range states {
		if st.LastThread != "" {
			e.threads[st.LastChannel+"/"+st.LastThread] = st.Name
		}
	}
}

// SpentIn adds tokens a session spent to the day of the automation that
// started it, if one did (daily_budget).
func (e *Engine) SpentIn(ctx context.Context, channel, thread string, tokens int64) error {
	e.mu.Lock()
	name, ok := e.threads[channel+"/"+thread]
	e.mu.Unlock()
	if !ok {
		return nil
	}
	return e.Spent(ctx, name, tokens)
}

package bot

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// registry maps threads to their running actors. Its mutex guards the map
// only; the hot path of a session (events, checklist) never takes it.
type registry struct {
	b      *Bot
	mu     sync.Mutex
	actors map[threadKey]*actor
	wg     sync.WaitGroup
	closed bool
}

func newRegistry(b *Bot) *registry { return &registry{b: b, actors: make(map[threadKey]*actor)} }

// deliver appends m to the thread's inbox, starting its actor if needed.
// It never blocks on the session.
func (r *registry) deliver(key threadKey, m message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.actors[key]
	if a == nil {
		if r.closed {
			r.b.log.Warn("shutting down: dropped a message for an idle session", "channel", key.channel, "thread", key.ts)
			return
		}
		a = newActor(r.b, key)
		r.actors[key] = a
		r.wg.Add(1)
		r.b.metrics.SessionsActive(1)
		go a.loop()
	}
	a.push(m)
}

// find returns the thread's actor, nil when none runs.
func (r *registry) find(key threadKey) *actor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.actors[key]
}

// retire removes an idle actor unless a message slipped in meanwhile.
func (r *registry) retire(a *actor) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.inbox) > 0 {
		return false
	}
	delete(r.actors, a.key)
	r.b.metrics.SessionsActive(-1)
	return true
}

// wait closes the registry to new actors and waits for the running ones.
func (r *registry) wait() {
	r.mu.Lock()
	r.closed = true
	actors := make([]*actor, 0, len(r.actors))
	for _, a := range r.actors {
		actors = append(actors, a)
	}
	r.mu.Unlock()
	for _, a := range actors {
		a.signal() // idle actors re-check and exit
	}
	r.wg.Wait()
}

// actor owns one thread's session while it is active: it takes messages
// one at a time, turns them into events for the state machine and carries
// out the effects, so a session needs no lock of its own.
type actor struct {
	b   *Bot
	key threadKey
	log *slog.Logger

	mu    sync.Mutex
	inbox []message
	wake  chan struct{}

	// Owned by the actor goroutine. The lease (lease.go): held
	// while leased; lost once another replica has the session (or never
	// had it: a forwarder). ctx carries the lease to the session's Slack
	// calls and is cancelled when it is lost.
	lease  store.Lease
	leased bool
	lost   bool
	ctx    context.Context
	cancel context.CancelFunc

	loaded    bool
	rec       *Session        // nil: the thread has no session
	last      lastSave        // what the last save stored
	durable   map[string]bool // pending posts known stored (posts.go)
	check     *checklist
	run       *runHandle  // the run in flight, nil when none
	stream    *runStream  // the run's stream (stream.go), nil when none
	prep      *prepHandle // the checkout and setup in flight, nil when none
	side      int         // pushes and uploads in flight (sideOp)
	forging   bool        // a forge call of following is in flight (following.go)
	took      []string    // ts of the latest replies taken (tookReply)
	seq       int
	waiter    chan bool       // the run's approver, waiting for a click
	saving    chan error      // the commit effSaveForGate started, for the gated run
	committed <-chan struct{} // closed when that commit is done

	// Under mu: the actor created the session and its record is not
	// stored yet, and the lease its first save took again, until the actor
	// adopts it (lease.go).
	unstored bool
	retaken  *store.Lease
	start    string // the new session's store.Start (starts.go), until stored
}

func newActor(b *Bot, key threadKey) *actor {
	a := &actor{b: b, key: key, log: b.log.With("channel", key.channel, "thread", key.ts), wake: make(chan struct{}, 1)}
	a.ctx, a.cancel = context.WithCancel(b.bg)
	return a
}

func (a *actor) push(m message) {
	a.mu.Lock()
	a.inbox = append(a.inbox, m)
	a.mu.Unlock()
	a.signal()
}

func (a *actor) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *actor) loop() {
	defer a.b.reg.wg.Done()
	for {
		m, ok := a.next()
		if !ok {
			return
		}
		a.handle(m)
	}
}

// next returns the next message, or false once the actor is idle and retired.
func (a *actor) next() (message, bool) {
	for {
		a.mu.Lock()
		if len(a.inbox) > 0 {
			m := a.inbox[0]
			a.inbox[0] = nil
			a.inbox = a.inbox[1:]
			a.mu.Unlock()
			return m, true
		}
		a.mu.Unlock()
		if a.idle() && a.editSaved() && a.b.reg.retire(a) {
			a.release()
			return nil, false
		}
		<-a.wake
	}
}

// idle: no run, setup, push or upload, no approval waiting, no checklist
// edit pending.
// A session following its request keeps its actor, and so its lease,
// until h9 stops or the lease is lost (bot/follow's Poller).
func (a *actor) idle() bool {
	return a.run == nil && a.prep == nil && a.side == 0 && a.waiter == nil && (a.check == nil || !a.check.busy()) &&
		(a.rec == nil || !a.rec.Follow.Following() || a.lost || a.b.stopping.Load())
}

func (a *actor) handle(m message) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("session actor panicked; message dropped", "panic", p)
		}
	}()
	if in, ok := m.(input); ok && a.lost {
		a.forward(in) // the session is another replica's
		return
	}
	if !a.leased && !a.lost && !a.takeLease(m) {
		return
	}
	if a.lost { // messages of the actor's own making: the run ending, the lease lost
		m.handle(a)
		return
	}
	if err := a.load(); err != nil {
		// Not "no session": creating one now would overwrite the record.
		a.log.Error("loading session; message dropped", "err", err)
		return
	}
	m.handle(a)
}

// apply runs the state machine on ev and carries out its effects, as
// long as the session's lease holds: none runs once it is lost.
func (a *actor) apply(ev event) {
	next, effs := transition(*a.rec, ev)
	*a.rec = next
	for _, e := range effs {
		if !a.holding() {
			return
		}
		e.run(a)
	}
	a.syncAgentStatus() // surfaces.go
}

// load reads the thread's session once per actor lifetime. A failed read
// is tried again on the next message.
func (a *actor) load() error {
	if a.loaded {
		return nil
	}
	rec, err := a.b.store.FindThread(a.ctx, a.key.channel, a.key.ts)
	if errors.Is(err, store.ErrNotFound) {
		a.loaded = true
		return nil
	}
	if err != nil {
		return err
	}
	s, err := decodeSession(rec)
	if err != nil {
		return err
	}
	s.rules = a.b.cfg.tokenRules()
	a.loaded, a.rec = true, s
	a.b.known.add(a.key)
	a.stored(rec)
	a.log = sessionLogger(a.b.log, s)
	if s.ChecklistTS == "" {
		// h9 may have stopped between posting the checklist and saving its
		// ts: adopt the thread's checklist rather than post a second one.
		if ts := a.b.api.FindChecklist(a.ctx, a.log, s.Channel, s.ThreadTS); ts != "" {
			a.apply(evChecklistPosted{ts: ts})
		}
	}
	snap, err := a.b.cfg.Agent.Snapshot(a.b.bg, s.ID)
	if err != nil {
		a.log.Warn("loading todos", "err", err)
	}
	a.apply(evLoaded{tokens: snap.Total})
	a.check = a.newChecklist(s.ChecklistTS, a.view(snap.Todos, snap.Evidence))
	a.stopLeftStream() // stream.go: before anything else is posted
	a.finishEdit()
	return nil
}

// create makes the thread's session and starts it.
func (a *actor) create(team, owner, task string, mode planning.PlanMode, repo *SessionRepo, files []agent.Attachment) {
	a.createWithBudget(team, owner, task, mode, repo, files, 0)
}

// createWithBudget is create with the session's own token budget (0: the
// configured one).
func (a *actor) createWithBudget(team, owner, task string, mode planning.PlanMode, repo *SessionRepo, files []agent.Attachment, budget int) {
	now := time.Now()
	a.rec = &Session{ID: newSessionID(team, a.key.channel, a.key.ts), Team: team, Channel: a.key.channel, ThreadTS: a.key.ts, Updated: now,
		rules: a.b.cfg.tokenRules()}
	a.log = sessionLogger(a.b.log, a.rec)
	a.mu.Lock()
	a.unstored = true
	a.mu.Unlock()
	a.b.known.add(a.key)
	a.b.metrics.SessionCreated()
	a.apply(evCreate{owner: owner, task: task, mode: mode, at: now, repo: repo, files: files, budget: budget})
}

// save persists the session; a failure is logged (the session goes on in
// memory and the next save retries). It follows a commit still in flight,
// so an older version never lands after a newer one.
// A save that would store what the last one did is skipped.
func (a *actor) save() {
	if a.committed != nil {
		<-a.committed
		a.committed = nil
	}
	a.noteEditDue()
	rec, err := a.rec.record()
	if err == nil && a.last.same(rec) {
		return
	}
	a.rec.Updated = time.Now()
	rec.Meta.Updated = a.rec.Updated
	if err == nil {
		err = a.b.store.PutSession(a.b.bg, rec)
	}
	if err != nil {
		a.saveFailed(err)
		return
	}
	a.stored(rec)
}

// lastSave is what the actor's last save stored.
type lastSave struct {
	data   []byte
	active bool
}

func (l lastSave) same(rec store.SessionRecord) bool {
	return l.data != nil && rec.Meta.Active == l.active && bytes.Equal(rec.Data, l.data)
}

// stored notes a save (or a load): the pending posts it holds are durable.
func (a *actor) stored(rec store.SessionRecord) {
	a.last = lastSave{data: rec.Data, active: rec.Meta.Active}
	a.noteStored()
	if a.leased && !a.lost {
		a.b.follows.Note(a.key, a.rec.Follow) // the poller knocks only on sessions this replica holds
	}
	if a.durable == nil {
		a.durable = map[string]bool{}
	}
	for _, p := range a.rec.Posts {
		a.durable[p.Key] = true
	}
}

// saveForGate starts the session's commit and goes on: a new session's
// first run starts while it commits, and its gate waits for it.
func (a *actor) saveForGate() {
	a.rec.Updated = time.Now()
	rec, err := a.rec.record() // encoded now: the actor goes on changing a.rec
	saved, committed := make(chan error, 1), make(chan struct{})
	a.saving, a.committed = saved, committed
	a.b.tasks.spawn(func() {
		defer close(committed)
		if err == nil {
			err = a.commitFirst(rec)
		}
		if err != nil {
			a.log.Error("saving session", "err", err)
		}
		saved <- err
	})
}

// view is the checklist as the record says, with these todos and their
// evidence.
func (a *actor) view(todos []planning.TodoItem, evidence map[string]planning.Evidence) render.Checklist {
	c := render.Checklist{
		SessionID: a.rec.ID, Task: a.rec.Task, Mode: a.rec.Mode, State: a.rec.stateLabel(),
		Todos: todos, Evidence: evidence, Spend: a.rec.spend(), Running: a.busy(), Unsandboxed: a.b.unsandboxed,
	}
	if r := a.rec.Repo; r != nil {
		line := r.line()
		c.Repo = &line
	}
	return c
}

// busy: a run, or the checkout and setup, is going on (Stop shows).
func (a *actor) busy() bool { return a.run != nil || a.prep != nil }

// refresh pushes the record's state to the checklist (coalesced).
func (a *actor) refresh() {
	rec, running, spend := a.rec, a.busy(), a.rec.spend()
	var repo *render.RepoLine
	if rec.Repo != nil {
		line := rec.Repo.line()
		repo = &line
	}
	a.check.set(func(c *render.Checklist) {
		c.Task, c.Mode, c.State, c.Running, c.Repo = rec.Task, rec.Mode, rec.stateLabel(), running, repo
		if spend.Tokens >= c.Spend.Tokens { // a run's events may be ahead of the record
			c.Spend = spend
		}
		if !running {
			c.Activity = ""
		}
	})
	if !running {
		a.check.stopClock()
	}
}

// post posts in the session's thread and returns the post's ts ("" when it failed).
func (a *actor) post(m render.Message) string {
	if a.check != nil {
		a.check.waitFirstPost() // the checklist stays the thread's first reply
	}
	ts, _ := a.b.api.PostMessage(a.ctx, a.log, a.rec.Channel, a.rec.ThreadTS, m)
	return ts
}

// postEphemeral answers one user privately in the session's thread.
func (a *actor) postEphemeral(user, s string) {
	a.b.api.PostEphemeral(a.ctx, a.log, a.rec.Channel, user, a.rec.ThreadTS, text(s))
}

// sessionLogger tags every line about a session with its id, channel and
// thread, so an operator can grep any of them.
func sessionLogger(log *slog.Logger, s *Session) *slog.Logger {
	return log.With("session", s.ID, "channel", s.Channel, "thread", s.ThreadTS)
}

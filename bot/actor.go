package bot

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// Inbox messages. Everything that changes a session goes through its
// actor, one message at a time, so a session needs no lock of its own.
type (
	msgCreate struct {
		team, channel, thread, owner, task string
		mode                               planning.PlanMode
	}
	msgMention struct{ user, text, ts string } // "@h9 <task>": new session, or a reply in an existing one
	msgReply   struct{ user, text, ts string }
	msgStatus  struct{ user string }
	msgAction  struct {
		user, channel, action string
		value                 render.ButtonValue
	}
	msgRunDone struct {
		run     *runHandle
		res     agent.Result
		err     error
		errText string // EventError's user-facing words
	}
	msgApprovalAsk struct {
		run   *runHandle
		req   agent.ApprovalRequest
		reply chan bool
	}
	msgRecover         struct{}
	msgChecklistPosted struct{ ts string } // posted late, after a failed first post
)

// registry maps session ids to their running actors. Its mutex guards the
// map only; the hot path of a session (events, checklist) never takes it.
type registry struct {
	b      *Bot
	mu     sync.Mutex
	actors map[string]*actor
	wg     sync.WaitGroup
	closed bool
}

func newRegistry(b *Bot) *registry { return &registry{b: b, actors: make(map[string]*actor)} }

// deliver appends m to the session's inbox, starting its actor if needed.
// It never blocks on the session.
func (r *registry) deliver(id string, m any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.actors[id]
	if a == nil {
		if r.closed {
			sessionLogger(r.b.log, id).Warn("shutting down: dropped a message for an idle session")
			return
		}
		a = newActor(r.b, id)
		r.actors[id] = a
		r.wg.Add(1)
		go a.loop()
	}
	a.push(m)
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
	delete(r.actors, a.id)
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

// actor owns one session while it is active.
type actor struct {
	b   *Bot
	id  string
	log *slog.Logger

	mu    sync.Mutex
	inbox []any
	wake  chan struct{}

	// Owned by the actor goroutine.
	loaded bool
	rec    *Session
	check  *checklist
	run    *runHandle // the run in flight, nil when none (the seed's dispatch guard)
	took   []string   // ts of the latest replies taken (tookReply)
	seq    int
	waiter chan bool // the run's approver, waiting for a click
}

func newActor(b *Bot, id string) *actor {
	return &actor{b: b, id: id, log: sessionLogger(b.log, id), wake: make(chan struct{}, 1)}
}

func (a *actor) push(m any) {
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
func (a *actor) next() (any, bool) {
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
		if a.idle() && a.b.reg.retire(a) {
			return nil, false
		}
		<-a.wake
	}
}

// idle: no run, no approval waiting, no checklist edit pending.
func (a *actor) idle() bool {
	return a.run == nil && a.waiter == nil && (a.check == nil || !a.check.busy())
}

func (a *actor) handle(m any) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("session actor panicked; message dropped", "panic", p)
		}
	}()
	exists, err := a.load()
	if err != nil {
		// Not "no session": creating one now would overwrite the record.
		a.log.Error("loading session; message dropped", "err", err)
		return
	}
	switch m := m.(type) {
	case msgCreate:
		if !exists {
			a.create(m.team, m.channel, m.thread, m.owner, m.task, m.mode)
		}
	case msgMention:
		if exists {
			if !a.tookReply(m.ts) {
				a.onReply(m.user, m.text, m.ts)
			}
			return
		}
		team, channel, thread, ok := splitSessionID(a.id)
		if ok {
			a.create(team, channel, thread, m.user, m.text, planning.PlanModePlan)
		}
	case msgReply:
		if exists && !a.tookReply(m.ts) {
			a.onReply(m.user, m.text, m.ts)
		}
	case msgStatus:
		a.onStatus(m.user, exists)
	case msgAction:
		a.onAction(m, exists)
	case msgRunDone:
		a.onRunDone(m)
	case msgApprovalAsk:
		a.onApprovalAsk(m)
	case msgRecover:
		if exists {
			a.onRecover()
		}
	case msgChecklistPosted:
		a.onChecklistPosted(m.ts, exists)
	}
}

// recentReplies bounds tookReply's memory: a mention's two events arrive
// next to each other.
const recentReplies = 16

// tookReply records ts as taken and reports whether it already was: a
// mention delivered first as a plain reply (bot id unknown) and then as
// app_mention is one reply.
func (a *actor) tookReply(ts string) bool {
	if slices.Contains(a.took, ts) {
		return true
	}
	if len(a.took) == recentReplies {
		a.took = slices.Delete(a.took, 0, 1)
	}
	a.took = append(a.took, ts)
	return false
}

// load reads the session once per actor lifetime; false when there is
// none. A failed read is tried again on the next message.
func (a *actor) load() (bool, error) {
	if a.loaded {
		return a.rec != nil, nil
	}
	rec, err := a.b.store.get(a.id)
	if err != nil {
		return false, err
	}
	a.loaded = true
	if rec == nil {
		return false, nil
	}
	a.rec = rec
	if rec.ChecklistTS == "" {
		// h9 may have stopped between posting the checklist and saving its
		// ts: adopt the thread's checklist rather than post a second one.
		if ts := a.b.api.findChecklist(a.b.bg, a.log, rec.Channel, rec.ThreadTS); ts != "" {
			rec.ChecklistTS = ts
			a.save()
		}
	}
	todos, err := a.b.cfg.Agent.Todos(rec.ID)
	if err != nil {
		a.log.Warn("loading todos", "err", err)
	}
	a.check = a.newChecklist(rec.ChecklistTS, a.view(todos))
	return true, nil
}

// save persists the session; a failure is logged (the session goes on in
// memory and the next save retries).
func (a *actor) save() {
	a.rec.Updated = time.Now()
	if err := a.b.store.put(a.rec); err != nil {
		a.log.Error("saving session", "err", err)
	}
}

// view is the checklist as the record says; todos replace the current list
// when non-nil.
func (a *actor) view(todos []planning.TodoItem) render.Checklist {
	return render.Checklist{
		SessionID: a.rec.ID, Task: a.rec.Task, Mode: a.rec.Mode, State: a.rec.State,
		Todos: todos, Running: a.run != nil, Unsandboxed: a.b.unsandboxed,
	}
}

// refresh pushes the record's state to the checklist (coalesced).
func (a *actor) refresh() {
	rec, running := a.rec, a.run != nil
	a.check.set(func(c *render.Checklist) {
		c.Task, c.Mode, c.State, c.Running = rec.Task, rec.Mode, rec.State, running
		if !running {
			c.Activity = ""
		}
	})
}

// say posts in the session's thread.
func (a *actor) say(m render.Message) string {
	if a.check != nil {
		a.check.waitFirstPost() // the checklist stays the thread's first reply
	}
	ts, _ := a.b.api.post(a.b.bg, a.log, a.rec.Channel, a.rec.ThreadTS, m)
	return ts
}

// tell answers one user privately in the session's thread.
func (a *actor) tell(user, s string) {
	a.b.api.ephemeral(a.b.bg, a.log, a.rec.Channel, user, a.rec.ThreadTS, text(s))
}

// sessionLogger tags every line about a session with its id, channel and
// thread (all three are in the id), so an operator can grep any of them.
func sessionLogger(log *slog.Logger, id string) *slog.Logger {
	_, channel, thread, ok := splitSessionID(id)
	if !ok {
		return log.With("session", id)
	}
	return log.With("session", id, "channel", channel, "thread", thread)
}

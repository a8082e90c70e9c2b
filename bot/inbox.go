package bot

import (
	"errors"
	"slices"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/agent/store"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// message is what an actor's inbox carries: Slack input for the thread,
// or news from the session's run. handle runs on the actor, after the
// thread's session was loaded (a.rec is nil when there is none), and
// turns the message into a state machine event where one applies.
type message interface {
	handle(a *actor)
}

// msgCreate: /h9 plan or /h9 run posted this thread's root message.
type msgCreate struct {
	team, owner, task string
	mode              planning.PlanMode
	repo              *SessionRepo
	start             string // its store.Start, forgotten once the record is stored (starts.go)
	swept             bool   // delivered by the start sweep, not by the command
	budget            int    // an automation's budget: (automations.go); 0 = the configured one
}

func (m msgCreate) handle(a *actor) {
	if a.rec != nil {
		if m.start != "" { // a sweep's second delivery: the session is here
			a.b.tasks.spawn(func() { a.b.forgetStart(a.log, m.start) })
		}
		return
	}
	a.mu.Lock()
	a.start = m.start
	a.mu.Unlock()
	a.createWithBudget(m.team, m.owner, m.task, m.mode, m.repo, nil, m.budget)
}

// msgMention: "@h9 <task>" starts a session in plan mode, or is a reply in
// the thread's session.
type msgMention struct {
	team, user, text, ts string
	files                []sharedFile
}

func (m msgMention) handle(a *actor) {
	if a.rec == nil {
		a.createFromMention(m)
		return
	}
	if !a.tookReply(m.ts) {
		a.reply(m.user, m.text, m.ts, m.files)
	}
}

// msgReply: a message in the thread.
type msgReply struct {
	user, text, ts string
	files          []sharedFile
}

func (m msgReply) handle(a *actor) {
	if a.rec != nil && !a.tookReply(m.ts) {
		a.reply(m.user, m.text, m.ts, m.files)
	}
}

// reply checks who wrote and hands the reply to the machine.
func (a *actor) reply(user, text, ts string, shared []sharedFile) {
	if why := a.b.perms.refusal(user, a.rec.Channel); why != "" {
		a.postEphemeral(user, why)
		return
	}
	files := a.takeFiles(ts, shared)
	if text != "" || len(files) > 0 {
		a.apply(evReply{user: user, text: text, ts: ts, files: files})
	}
}

// msgStatus: "@h9 status" inside a thread.
type msgStatus struct{ user string }

func (m msgStatus) handle(a *actor) { a.onStatus(m.user) }

// msgAction: a button click routed to this thread.
type msgAction struct {
	user, channel, action string
	value                 render.ButtonValue
}

// handle checks that the session exists and the clicker may control it.
func (m msgAction) handle(a *actor) {
	if a.rec == nil {
		a.log.Warn("click for an unknown session refused", "session", m.value.SessionID, "user", m.user)
		a.b.api.PostEphemeral(a.ctx, a.log, m.channel, m.user, "", text("That button belongs to a session h9 does not know, so nothing happened."))
		return
	}
	if render.IsNetworkAction(m.action) {
		a.networkClick(m)
		return
	}
	if !a.b.perms.canControl(a.rec, m.user) {
		a.postEphemeral(m.user, controlRefusal(m.action, a.rec.Owner))
		return
	}
	a.apply(evClick{user: m.user, action: m.action, value: m.value})
}

// msgRunDone: the session's run returned.
type msgRunDone struct {
	run *runHandle
	res agent.Result
	err error
}

func (m msgRunDone) handle(a *actor) {
	h := a.run
	if h == nil || m.run != h {
		return // a run this actor no longer waits for
	}
	a.run = nil
	done := a.runDone(h, m.res, m.err)
	// Before the run's context ends, so under the lease; with the status
	// the session is in once the run's outcome is applied (stream.go).
	a.endStream(a.statusAfter(done))
	h.cancel()
	if errors.Is(m.err, store.ErrFenced) {
		a.drop("the run's write was fenced")
	}
	if a.lost {
		return // the new holder resumes the run as a restart does
	}
	before := a.rec.Tokens.TotalTokens
	a.apply(done)
	a.settleStream()
	a.b.automationSpent(a.key, a.rec.Tokens.TotalTokens-before) // automations.go: daily_budget
}

// msgApprovalAsk: the run wants a step approved (confirm each step).
type msgApprovalAsk struct {
	run   *runHandle
	req   agent.ApprovalRequest
	reply chan bool
}

func (m msgApprovalAsk) handle(a *actor) {
	if a.rec == nil || a.run != m.run || a.lost {
		m.reply <- false
		return
	}
	a.waiter = m.reply
	a.apply(evApprovalAsked{req: m.req})
}

// msgRecover: h9 started and found the session active.
type msgRecover struct{}

func (msgRecover) handle(a *actor) {
	if a.rec != nil && a.run == nil && !a.lost {
		a.apply(evRecover{})
	}
}

// msgChecklistPosted: the checklist was posted, late or first.
type msgChecklistPosted struct{ ts string }

func (m msgChecklistPosted) handle(a *actor) {
	if a.rec != nil && !a.lost {
		a.apply(evChecklistPosted(m))
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

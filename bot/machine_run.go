package bot

import (
	"slices"
	"strconv"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// evCreate starts a session in a thread: the record, then its first run,
// while the checklist is posted in its first state.
type evCreate struct {
	owner, task string
	mode        planning.PlanMode
	at          time.Time
	repo        *SessionRepo       // nil: an empty workspace
	files       []agent.Attachment // shared on the message that started it
	budget      int                // the session's own budget (an automation's); 0 = the configured one
}

func (e evCreate) apply(m *move) {
	s := m.s
	s.Owner, s.Task, s.Mode, s.Created, s.Repo, s.Budget = e.owner, e.task, e.mode, e.at, e.repo, e.budget
	s.AutoRun = e.mode != planning.PlanModePlan
	s.Request, s.Files = firstRequest(e.task), e.files
	s.State = runState(e.mode)
	m.log("session created", "owner", e.owner, "mode", e.mode.String())
	if s.Repo != nil {
		// The checkout and the setup come first; the record commits meanwhile.
		s.State = stateSettingUp
		m.do(effSaveForGate{}, effPostChecklist{}, effPrepare{})
		return
	}
	// The record's commit overlaps the run's start; the run's gate waits
	// for it before the first model request (see effStartRun.gated).
	m.do(effSaveForGate{}, effPostChecklist{}, effStartRun{req: s.Request, mode: s.Mode, budget: s.budget(), gated: true})
}

// evRunDone is the Planning module's EventDone: a run ended, and what follows is
// decided here.
type evRunDone struct {
	stopping bool   // h9 is shutting down: the next start resumes the run
	err      error  // why the run failed (nil: it succeeded)
	planRun  bool   // the run was in plan mode
	text     string // its final answer
	todos    []planning.TodoItem
	evidence map[string]planning.Evidence
	tokens   agent.Usage // the session's total after the run (zero: unknown)
}

func (e evRunDone) apply(m *move) {
	s := m.s
	s.Progress = planning.Summarize(e.todos)
	if e.tokens != (agent.Usage{}) {
		s.Tokens = e.tokens
	}
	m.do(effSetTodos{todos: slices.Clone(e.todos), evidence: e.evidence}, effForgetStep{})
	if e.stopping {
		// State and approval stay: the next start resumes the run or
		// reports the step interrupted.
		m.saveAndShow()
		return
	}
	s.Approval = nil
	mark, stopped := len(m.effs), s.StoppedBy != ""
	var next *agent.Request
	if !m.addressed(e) { // the run addressing feedback goes on to the push (following.go)
		next = e.outcome(m)
	}
	if len(s.Queue) > 0 && s.State != stateOverBudget { // a queued reply goes before auto-run's next run
		q := s.Queue[0]
		s.Queue = slices.Delete(s.Queue, 0, 1)
		m.flushBefore(mark)
		m.do(effUnreact{ts: q.TS, name: reactionQueued}, effReact{ts: q.TS, name: reactionPickedUp})
		m.runReply(q.Text, q.Files)
		return
	}
	if next != nil && !s.overBudget() {
		m.flushBefore(mark)
		m.startRun(*next)
		return
	}
	if next == nil && !stopped && m.addressWaiting() { // follow_up: auto's batch that came meanwhile
		m.flushBefore(mark)
		return
	}
	if next != nil {
		m.parkAtBudget(*next)
	}
	m.showFinalBefore(mark)
}

// flushBefore sends the checklist's pending edit (its todos) before the
// effects from mark on: what the outcome posts is read with them in view.
func (m *move) flushBefore(mark int) {
	m.effs = slices.Insert(m.effs, mark, effect(effFlushChecklist{}))
}

// showFinalBefore, for a run that ended for good, saves the session and
// shows its final state on the checklist (no Stop, no Now: line) before the
// effects from mark on: nobody reads "Done" above a checklist still running.
// The save comes first, so the checklist never shows a state no record holds,
// and the posts after it find their intent already stored (posts.go).
func (m *move) showFinalBefore(mark int) {
	m.effs = slices.Insert(m.effs, mark, []effect{effSave{}, effRefresh{}, effFlushChecklist{}}...)
}

// evRecover: h9 started and found the session active. A step approval
// that was pending is reported interrupted; a run is resumed.
type evRecover struct{}

func (evRecover) apply(m *move) {
	s := m.s
	if len(s.Posts) > 0 {
		m.do(effFinishPosts{}) // what the previous holder decided to post comes first
	}
	if s.Outcome != nil {
		m.do(effRepoOutcome{}) // a repository outcome the previous holder did not make
	}
	switch {
	case s.Approval != nil:
		what := "the approval of " + s.Approval.Tool + " `" + render.Truncate(s.Approval.Summary, 200) + "`" // RenderInterrupted escapes
		s.Approval, s.State = nil, stateInterrupted
		m.log("step approval interrupted by a restart")
		m.postNotice(render.RenderInterrupted(s.ID, what))
		m.saveAndShow()
	case !s.State.inFlight():
	case s.StoppedBy != "": // stopped, but h9 stopped before the run ended
		m.stopped()
		m.saveAndShow()
	case s.State == stateSettingUp:
		m.log("setting up again after a restart")
		m.postNotice(text(restartNotice))
		m.startRun(s.Request)
	default:
		m.log("resuming after a restart", "auto_run", s.AutoRun)
		m.postNotice(text(restartNotice))
		req := agent.Request{Intent: agent.IntentContinue}
		if s.Mode == planning.PlanModePlan {
			req = s.Request
		}
		m.startRun(req)
	}
}

// evLoaded: the actor loaded the session; tokens is the agent's total as
// its store has it, which a record saved before a crash may be behind.
type evLoaded struct{ tokens agent.Usage }

func (e evLoaded) apply(m *move) { m.s.Tokens = latest(e.tokens, m.s.Tokens) }

// evChecklistPosted: the checklist's first post returned its ts.
type evChecklistPosted struct{ ts string }

func (e evChecklistPosted) apply(m *move) {
	if m.s.ChecklistTS != e.ts {
		m.s.ChecklistTS = e.ts
		m.do(effSave{})
	}
}

// evApprovalAsked: in confirm-each-step mode the run wants to make a change.
type evApprovalAsked struct{ req agent.ApprovalRequest }

func (e evApprovalAsked) apply(m *move) {
	s := m.s
	if s.StoppedBy != "" { // asked while its run was being stopped: the step will not run
		m.do(effAnswerStep{approved: false})
		return
	}
	s.StepSeq++
	step := strconv.Itoa(s.StepSeq)
	// Saved before the post: a crash right after posting must find the
	// approval pending (and report it interrupted), not resume the run.
	s.Approval = &PendingApproval{StepID: step, Tool: e.req.Tool, Summary: e.req.Summary}
	m.do(effSave{}, effPostApproval{msg: render.RenderApproval(s.ID, step, e.req.Tool, e.req.Summary, e.req.Preview)})
}

// evApprovalShown: the step's approval message was posted; its buttons wait.
type evApprovalShown struct{ ts string }

func (e evApprovalShown) apply(m *move) {
	s := m.s
	if s.Approval == nil {
		return
	}
	s.Approval.TS, s.State = e.ts, stateAwaitingApproval
	m.saveAndShow()
}

// evApprovalUnseen: the approval could not be posted, so the step must not run.
type evApprovalUnseen struct{}

func (evApprovalUnseen) apply(m *move) {
	m.s.Approval = nil
	m.do(effSave{}, effAnswerStep{approved: false})
}

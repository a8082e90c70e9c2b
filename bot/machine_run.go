package bot

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
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
}

func (e evCreate) apply(m *move) {
	s := m.s
	s.Owner, s.Task, s.Mode, s.Created = e.owner, e.task, e.mode, e.at
	s.AutoRun = e.mode != planning.PlanModePlan
	s.Request = agent.Request{Intent: agent.IntentTask, Text: e.task}
	s.State = runState(e.mode)
	m.log("session created", "owner", e.owner, "mode", e.mode.String())
	// The record's commit overlaps the run's start; the run's gate waits
	// for it before the first model request (see effStartRun.gated).
	m.do(effSaveForGate{}, effPostChecklist{}, effStartRun{req: s.Request, mode: s.Mode, gated: true})
}

// evRunDone is the seed's EventDone: a run ended, and what follows is
// decided here.
type evRunDone struct {
	stopping bool   // h9 is shutting down: the next start resumes the run
	err      error  // why the run failed (nil: it succeeded)
	planRun  bool   // the run was in plan mode
	text     string // its final answer
	todos    []planning.TodoItem
}

func (e evRunDone) apply(m *move) {
	s := m.s
	s.Progress = planning.Summarize(e.todos)
	m.do(effSetTodos{todos: slices.Clone(e.todos)}, effForgetStep{})
	if e.stopping {
		// State and approval stay: the next start resumes the run or
		// reports the step interrupted.
		m.settled()
		return
	}
	s.Approval = nil
	m.do(effSettle{}) // the outcome below is posted after the checklist shows its todos
	next := e.outcome(m)
	if len(s.Queue) > 0 { // a queued reply goes before auto-run's next run
		q := s.Queue[0]
		s.Queue = slices.Delete(s.Queue, 0, 1)
		m.do(effUnreact{ts: q.TS, name: reactionQueued}, effReact{ts: q.TS, name: reactionPickedUp})
		m.runReply(q.Text)
		return
	}
	if next != nil {
		m.startRun(*next)
		return
	}
	m.settled()
}

// outcome sets the state a finished run leads to and posts about it; it
// returns the next run auto-run asks for, if any.
func (e evRunDone) outcome(m *move) *agent.Request {
	s := m.s
	switch {
	case s.StoppedBy != "":
		m.stopped()
	case e.err != nil:
		s.State = stateError
		m.log("run failed", "err", e.err)
		m.say(render.RenderError(s.ID, "The run failed: "+failureWords(e.err)))
	case e.planRun:
		m.afterPlan(e.text)
	case s.AutoRun:
		return m.afterAutoRun(e.text)
	default:
		m.afterFollowUp(e.text)
	}
	return nil
}

// failureWords is what users read about a failed run: the agent's words
// when it gave them.
func failureWords(err error) string {
	var re *agent.RunError
	switch {
	case errors.As(err, &re) && re.Text != "":
		return re.Text
	case errors.Is(err, context.DeadlineExceeded):
		return "it took too long"
	}
	return render.Truncate(err.Error(), 500)
}

// stopped ends a run the user stopped.
func (m *move) stopped() {
	s := m.s
	s.AutoRun, s.State = false, stateIdle
	m.say(text("Stopped by <@" + s.StoppedBy + ">. Reply in this thread to continue."))
	s.StoppedBy = ""
}

// afterPlan follows a plan-mode run: the review with its four buttons when
// there is a plan, otherwise the agent's words and how to go on.
func (m *move) afterPlan(finalText string) {
	s := m.s
	if s.Progress.Total == 0 {
		s.State = stateIdle
		msg := "No plan yet: the agent wrote no todo list."
		if finalText != "" {
			msg = render.Escape(render.Truncate(finalText, 3000)) + "\n\n" + msg
		}
		m.say(text(msg + " Reply in this thread with more detail and I will plan again, or start over with `/h9 run &lt;task&gt;` to skip planning."))
		return
	}
	s.Revision++
	s.State = stateAwaitingReview
	// The summary is its own message so it stays when the decision replaces
	// the buttons; without one, the checklist is the plan.
	if strings.TrimSpace(finalText) != "" {
		m.say(render.RenderPlanSummary(finalText))
	}
	m.do(effPostReview{msg: render.RenderReviewAsk(s.ID, s.Revision)})
}

// afterAutoRun is the seed's auto-run decision: the next run while todos
// are open and one was completed within stallLimit runs, else done or
// stalled.
func (m *move) afterAutoRun(finalText string) *agent.Request {
	s := m.s
	p := s.Progress
	if p.Active == 0 {
		s.AutoRun, s.State = false, stateDone
		m.say(render.RenderDone(finalText, p))
		return nil
	}
	if p.Completed > s.PrevDone {
		s.Stuck = 0
	} else {
		s.Stuck++
	}
	if s.Stuck < stallLimit {
		s.PrevDone = p.Completed
		return &agent.Request{Intent: agent.IntentContinue}
	}
	s.AutoRun, s.State = false, stateStalled
	m.log("auto-run stalled", "runs", s.Stuck, "progress", p.String())
	m.say(render.RenderStalled(s.ID, s.Stuck))
	return nil
}

// afterFollowUp reports a run outside auto-run.
func (m *move) afterFollowUp(finalText string) {
	s := m.s
	if p := s.Progress; p.Total > 0 && p.Active == 0 {
		s.State = stateDone
		m.say(render.RenderDone(finalText, p))
		return
	}
	s.State = stateIdle
	if finalText != "" {
		m.say(render.RenderAgentText(finalText))
	}
}

// evRecover: h9 started and found the session active. A step approval
// that was pending is reported interrupted; a run is resumed.
type evRecover struct{}

func (evRecover) apply(m *move) {
	s := m.s
	switch {
	case s.Approval != nil:
		what := "the approval of " + s.Approval.Tool + " `" + render.Truncate(s.Approval.Summary, 200) + "`" // RenderInterrupted escapes
		s.Approval, s.State = nil, stateInterrupted
		m.log("step approval interrupted by a restart")
		m.say(render.RenderInterrupted(s.ID, what))
		m.settled()
	case !s.State.inFlight():
	case s.StoppedBy != "": // stopped, but h9 stopped before the run ended
		m.stopped()
		m.settled()
	default:
		m.log("resuming after a restart", "auto_run", s.AutoRun)
		m.say(text(restartNotice))
		req := agent.Request{Intent: agent.IntentContinue}
		if s.Mode == planning.PlanModePlan {
			req = s.Request
		}
		m.startRun(req)
	}
}

// evChecklistPosted: the checklist's first post returned its ts.
type evChecklistPosted struct{ ts string }

func (e evChecklistPosted) apply(m *move) {
	if m.s.ChecklistTS != e.ts {
		m.s.ChecklistTS = e.ts
		m.do(effSave{})
	}
}

// evReviewPosted: the review was posted (the transition that posted it saves).
type evReviewPosted struct{ ts string }

func (e evReviewPosted) apply(m *move) { m.s.ReviewTS = e.ts }

// evApprovalAsked: in confirm-each-step mode the run wants to make a change.
type evApprovalAsked struct{ req agent.ApprovalRequest }

func (e evApprovalAsked) apply(m *move) {
	s := m.s
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
	m.settled()
}

// evApprovalUnseen: the approval could not be posted, so the step must not run.
type evApprovalUnseen struct{}

func (evApprovalUnseen) apply(m *move) {
	m.s.Approval = nil
	m.do(effSave{}, effAnswerStep{approved: false})
}

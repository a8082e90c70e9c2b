package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// The session state machine. transition is pure: given a session and an
// event it returns the session's next value and the effects to carry out,
// in order; the actor executes them (effects.go) and nothing else changes
// a session. An effect whose outcome matters (a post's ts, a refused
// cancellation) reports it as another event, applied at once.
//
// This file holds the states and what a finished run leads to;
// machine_run.go the other events of a run's life, machine_input.go what
// users do, posts.go what is posted. machine_table_test.go checks
// every (state, event) pair: a row, or "cannot happen" with the reason.

// event is something that happened to a session.
type event interface {
	// apply moves m.s to its next state and records the effects.
	apply(m *move)
}

// effect is something the actor does for a transition: a Slack call, a
// save, starting or stopping a run. String names it for the table test.
type effect interface {
	run(a *actor)
	String() string
}

// move is one transition in progress: the session being changed and the
// effects so far.
type move struct {
	s    *Session
	effs []effect
}

func (m *move) do(effs ...effect) { m.effs = append(m.effs, effs...) }

// transition is the machine: (session, event) → (next session, effects).
func transition(s Session, ev event) (Session, []effect) {
	next := s.clone()
	m := &move{s: &next}
	ev.apply(m)
	m.dropQueued() // a press queued for the end of a run lives only while one goes on (following.go)
	return next, m.effs
}

// state is where a session is in its lifecycle, stored as the word users
// read on the checklist and in /h9 status. The transitions:
//
//	/h9 plan, @h9 ─► planning ─ run ends with todos ─► awaiting review ─┬─ Approve & auto-run ─────────► running
//	                  ▲   │                                             ├─ Approve & confirm each step ─► running (confirm each step)
//	                  │   └─ run ends without todos ─► idle             ├─ Keep planning ─► idle
//	                  │                                                 ├─ Cancel ─► cancelled
//	                  └─────────────────── reply (revise the plan) ─────┘
//
//	/h9 run ─► running ─┬─ a step to confirm ─► awaiting approval ─┬─ Approve, Reject ─► running
//	             ▲      │                                          └─ restart ─► interrupted ─ Resume, reply ─► running
//	             │      ├─ auto-run, todos open, one completed in the last 3 runs ─┐
//	             └──────┼──────────────────────────────────── continue ─────────────┘
//	                    ├─ auto-run, 3 runs in a row without one ─► stalled ─ Resume, reply ─► running
//	                    ├─ every todo completed ─► done
//	                    └─ not auto-run, todos open ─► idle
//
//	with a repository, before the first run ─► setting up ─┬─ checkout made, setup ok ─► planning or running
//	                                                       ├─ fails ─► setup failed ─ Retry, reply ─► setting up
//	                                                       └─ Stop ─► idle (the next run sets up first)
//	done with a repository: the outcome carries the changes, Push branch and Open pull request
//
//	any run ─ fails ─► error ─ Retry ─► the same request again
//	any run ─ passes the token budget ─► over budget ─ Raise budget ─► the same run, on from where it stopped
//	any start while over the budget ─► over budget (reply: queued until Raise budget)
//	any run ─ Stop ─► (when the run ends) idle
//	idle, done, cancelled, error ─ reply ─► planning (plan mode) or running
//	planning, running, awaiting approval ─ reply ─► queued, taken when the run ends
//	planning, running ─ restart ─► the same (planning: the same request; running: continue)
//	setting up ─ restart ─► setting up again
//
// A run is in flight in setting up, planning, running and awaiting
// approval: these are what a restart acts on (the record's active flag,
// see evRecover).
type state string

const (
	stateIdle             state = "idle"
	statePlanning         state = "planning"
	stateAwaitingReview   state = "awaiting review"
	stateRunning          state = "running"
	stateAwaitingApproval state = "awaiting approval"
	stateStalled          state = "stalled"
	stateInterrupted      state = "interrupted"
	stateDone             state = "done"
	stateCancelled        state = "cancelled"
	stateError            state = "error"
	stateOverBudget       state = "over budget"
	stateSettingUp        state = "setting up"   // the repository's checkout and setup command
	stateSetupFailed      state = "setup failed" // Retry runs the setup again
)

// allStates is every state this h9 knows. A record holding another one was
// written by a newer h9 (a rolling upgrade): it is left alone, never taken
// for some other state (decodeSession).
var allStates = []state{stateIdle, statePlanning, stateAwaitingReview, stateRunning, stateAwaitingApproval,
	stateStalled, stateInterrupted, stateDone, stateCancelled, stateError, stateOverBudget, stateSettingUp, stateSetupFailed}

// known: s is one of allStates, or unset (an idle record).
func (s state) known() bool { return s == "" || slices.Contains(allStates, s) }

// inFlight: a run is going on (or was, when h9 stopped).
func (s state) inFlight() bool {
	return s == stateSettingUp || s == statePlanning || s == stateRunning || s == stateAwaitingApproval
}

// label is the state as users read it; a record without one is idle.
func (s state) label() string {
	if s == "" {
		return string(stateIdle)
	}
	return string(s)
}

// stallLimit is the Planning module's threshold: this many runs in a row without a
// newly completed todo stop auto-run.
const stallLimit = 3

// restartNotice is posted in a session's thread when h9 resumes its run.
const restartNotice = "h9 restarted and is resuming this session."

// startRun records req as the session's run and starts it: the state says
// a run is in flight (a restart resumes it) before the run begins. A
// session past its token budget starts nothing: it waits for Raise budget.
// A session whose repository is not set up yet sets it up first; the run
// starts when that succeeds (evPrepared).
func (m *move) startRun(req agent.Request) {
	s := m.s
	if s.overBudget() {
		m.parkAtBudget(req)
		m.saveAndShow()
		return
	}
	if req != s.Request {
		s.Files = nil // a new request; a retry keeps its files
	}
	req = s.withNetworkNews(req)
	s.Request, s.StoppedBy = req, ""
	if s.Repo != nil && !s.Repo.Ready {
		s.State = stateSettingUp
		m.do(effSave{}, effRefresh{}, effPrepare{})
		return
	}
	s.State = runState(s.Mode)
	m.do(effSave{}, effStartRun{req: req, mode: s.Mode, budget: s.budget()})
}

// parkAtBudget stops the session at its token budget and says so, with
// the Raise budget button; req is the run that starts once it is raised.
// Auto-run stays as it was, so raising the budget turns it back on.
func (m *move) parkAtBudget(req agent.Request) {
	s := m.s
	s.Request, s.State = req, stateOverBudget
	m.log("token budget reached", "tokens", s.Tokens.TotalTokens, "budget", s.budget())
	m.post(postBudget, render.RenderBudget(s.ID, s.spend(), s.budget(), s.baseBudget()))
}

// runState is the state shown while a run of that mode is in flight.
func runState(mode planning.PlanMode) state {
	if mode == planning.PlanModePlan {
		return statePlanning
	}
	return stateRunning
}

// resetAutoRun turns auto-run back on with the stall counter at zero.
func (m *move) resetAutoRun() {
	s := m.s
	s.AutoRun, s.Stuck, s.PrevDone = true, 0, s.Progress.Completed
}

// saveAndShow saves the session and shows its state on the checklist.
func (m *move) saveAndShow() { m.do(effSave{}, effRefresh{}) }

func (m *move) postNotice(msg render.Message) { m.post(postNotice, msg) }

func (m *move) postEphemeral(user, words string) { m.do(effPostEphemeral{user: user, text: words}) }

func (m *move) log(msg string, args ...any) {
	m.do(effLog{level: slog.LevelInfo, msg: msg, args: args})
}

func (m *move) logError(msg string, args ...any) {
	m.do(effLog{level: slog.LevelError, msg: msg, args: args})
}

// outcome sets the state a finished run leads to and posts about it; it
// returns the next run auto-run asks for, if any.
func (e evRunDone) outcome(m *move) *agent.Request {
	s := m.s
	switch {
	case s.StoppedBy != "":
		m.stopped()
	case errors.Is(e.err, agent.ErrBudget):
		req := agent.Request{Intent: agent.IntentProceed} // on from the step it stopped after
		if errors.Is(e.err, agent.ErrOverBudget) {
			req = s.Request // it did nothing: the same request again
		}
		m.parkAtBudget(req)
	case e.err != nil:
		s.State = stateError
		m.logError("run failed", "err", e.err)
		m.postNotice(render.WithSpend(render.RenderError(s.ID, "The run failed: "+failureWords(e.err)), s.spend()))
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
	m.postNotice(text("Stopped by <@" + s.StoppedBy + ">. Reply in this thread to continue."))
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
		m.postWords(text(msg + " Reply in this thread with more detail and I will plan again, or start over with `/h9 run &lt;task&gt;` to skip planning."))
		return
	}
	s.Revision++
	s.State = stateAwaitingReview
	// The summary is its own message so it stays when the decision replaces
	// the buttons; without one, the checklist is the plan.
	if strings.TrimSpace(finalText) != "" {
		m.postWords(render.RenderPlanSummary(finalText))
	}
	m.post(postReview, render.RenderReviewAsk(s.ID, s.Revision))
}

// afterAutoRun is the Planning module's auto-run decision: the next run while todos
// are open and one was completed within stallLimit runs, else done or
// stalled.
func (m *move) afterAutoRun(finalText string) *agent.Request {
	s := m.s
	p := s.Progress
	if p.Active == 0 {
		s.AutoRun, s.State = false, stateDone
		m.done(finalText)
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
	m.postNotice(render.WithSpend(render.RenderStalled(s.ID, s.Stuck), s.spend()))
	return nil
}

// afterFollowUp reports a run outside auto-run.
func (m *move) afterFollowUp(finalText string) {
	s := m.s
	if p := s.Progress; p.Total > 0 && p.Active == 0 {
		s.State = stateDone
		m.done(finalText)
		return
	}
	s.State = stateIdle
	if finalText != "" {
		m.postWords(render.RenderAgentText(finalText))
	}
}

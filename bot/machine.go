package bot

import (
	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// The session state machine. transition is pure: given a session and an
// event it returns the session's next value and the effects to carry out,
// in order; the actor executes them (effects.go) and nothing else changes
// a session. An effect whose outcome matters (a post's ts, a refused
// cancellation) reports it as another event, applied at once. The states
// and their transitions are drawn in state.go; machine_test.go covers
// every pair.

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
	return next, m.effs
}

// stallLimit is the seed's threshold: this many runs in a row without a
// newly completed todo stop auto-run.
const stallLimit = 3

// restartNotice is posted in a session's thread when h9 resumes its run.
const restartNotice = "h9 restarted and is resuming this session."

// startRun records req as the session's run and starts it: the state says
// a run is in flight (a restart resumes it) before the run begins.
func (m *move) startRun(req agent.Request) {
	s := m.s
	s.Request, s.State, s.StoppedBy = req, runState(s.Mode), ""
	m.do(effSave{}, effStartRun{req: req, mode: s.Mode})
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

// settled saves the session and shows its state on the checklist.
func (m *move) settled() { m.do(effSave{}, effRefresh{}) }

func (m *move) say(msg render.Message) { m.do(effPost{msg: msg}) }

func (m *move) tell(user, words string) { m.do(effTell{user: user, text: words}) }

func (m *move) log(msg string, args ...any) { m.do(effLog{msg: msg, args: args}) }

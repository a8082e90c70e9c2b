package bot

// state is where a session is in its lifecycle; machine.go moves it. It is
// stored as the word users see on the checklist and in /h9 status.
//
//	                 /h9 plan, @h9                         /h9 run
//	                       │                                  │
//	  reply (revise) ─► planning ◄──── restart ──┐         running ◄── restart (Continue)
//	                       │ run ends            │            │
//	        ┌──────────────┼──────────────┐      │            ├─ step to confirm ─► awaiting approval
//	        ▼ no todos     ▼ todos        │      │            │     Approve/Reject ─► running
//	      idle      awaiting review       │      │            │     Stop ─► (run ends) idle
//	                 │  │  │  │           │      │            │     restart ─► interrupted
//	Approve & ───────┘  │  │  └─ Cancel ─► cancelled          │
//	auto-run / confirm  │  └─ Keep planning ─► idle           ├─ auto-run, todos open, a todo
//	each step ─► running└─ reply ─► planning                  │  completed within 3 runs ─► running
//	                                                          ├─ 3 runs without one ─► stalled
//	  any run fails ─► error ── Retry ─► the same request     ├─ all todos done ─► done
//	  Stop ─► (the run ends) idle                             └─ not auto-run ─► idle or done
//	  stalled, interrupted ── Resume, or a reply ─► running
//	  idle, done, cancelled, error ── a reply ─► planning (plan mode) or running
//	  a reply during a run is queued, and handled when the run ends
//
// The states in which a run is in flight (planning, running, awaiting
// approval) are what a restart resumes: they are stored as the session's
// active flag, and the restart finds them (see evRecover).
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
)

// inFlight: a run is going on (or was, when h9 stopped).
func (s state) inFlight() bool {
	return s == statePlanning || s == stateRunning || s == stateAwaitingApproval
}

// label is the state as users read it; a record without one is idle.
func (s state) label() string {
	if s == "" {
		return string(stateIdle)
	}
	return string(s)
}

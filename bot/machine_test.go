package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// sess is a session in state st, shaped by opts.
func sess(st state, opts ...func(*Session)) Session {
	s := Session{ID: "T1/C1/1.1", Team: "T1", Channel: "C1", ThreadTS: "1.1", Owner: "U1", Task: "the task",
		State: st, Request: agent.Request{Intent: agent.IntentTask, Text: "the task"}, ChecklistTS: "1.2"}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func planMode(s *Session)    { s.Mode = planning.PlanModePlan }
func confirmMode(s *Session) { s.Mode = planning.PlanModeAutoEdit }
func autoRun(s *Session)     { s.AutoRun = true }

func reviewOpen(s *Session) {
	planMode(s)
	s.Revision, s.ReviewTS = 2, "1.5"
	s.Progress = planning.Progress{Total: 2, Active: 2}
}

func pendingStep(s *Session) {
	confirmMode(s)
	s.StepSeq = 1
	s.Approval = &PendingApproval{StepID: "1", TS: "1.7", Tool: "write_file", Summary: "x.txt"}
}

func queued(s *Session) { s.Queue = []QueuedReply{{User: "U1", Text: "also b", TS: "1.9"}} }

func stuck(n, prevDone int) func(*Session) {
	return func(s *Session) { s.Stuck, s.PrevDone = n, prevDone }
}

func stoppedBy(user string) func(*Session) { return func(s *Session) { s.StoppedBy = user } }

func items(statuses ...planning.TodoStatus) []planning.TodoItem {
	out := make([]planning.TodoItem, len(statuses))
	for i, st := range statuses {
		out[i] = planning.TodoItem{ID: fmt.Sprint(i), Content: fmt.Sprint("todo ", i), Status: st}
	}
	return out
}

var (
	pending   = planning.TodoPending
	running   = planning.TodoInProgress
	completed = planning.TodoCompleted
)

func click(action string, opts ...func(*render.ButtonValue)) evClick {
	v := render.ButtonValue{SessionID: "T1/C1/1.1", Revision: 2, StepID: "1"}
	for _, o := range opts {
		o(&v)
	}
	return evClick{user: "U1", action: action, value: v}
}

func revision(n int) func(*render.ButtonValue) { return func(v *render.ButtonValue) { v.Revision = n } }
func stepID(id string) func(*render.ButtonValue) {
	return func(v *render.ButtonValue) { v.StepID = id }
}

// row is one transition: from a state, an event, to a state with effects.
type row struct {
	what    string // what the row checks
	from    Session
	ev      event
	to      state
	effects []string
	check   func(t *testing.T, s Session) // further fields, when the row is about them
}

var startRows = []row{
	{what: "/h9 plan: the record commits while the plan run starts, gated on it", from: Session{ID: "T1/C1/1.1"},
		ev: evCreate{owner: "U1", task: "fix it", mode: planning.PlanModePlan}, to: statePlanning,
		effects: []string{"log session created", "save for the run's gate", "post the checklist", "start task (plan) fix it gated"},
		check: func(t *testing.T, s Session) {
			if s.AutoRun || s.Owner != "U1" || s.Task != "fix it" || s.Request != (agent.Request{Intent: agent.IntentTask, Text: "fix it"}) {
				t.Errorf("session = %+v", s)
			}
		}},
}

// A failed run's message gives the agent's words for it when there are some.
func TestFailureWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&agent.RunError{Text: "The model endpoint is down.", Err: agent.ErrModel}, "The model endpoint is down."},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), "it took too long"},
		{errors.New(strings.Repeat("x", 600)), strings.Repeat("x", 499) + "…"},
	} {
		if got := failureWords(tc.err); got != tc.want {
			t.Errorf("failureWords(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

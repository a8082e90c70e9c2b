package bot

import (
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

func reply() evReply { return evReply{user: "U1", text: "also b", ts: "1.9"} }

func queuedOnce(t *testing.T, s Session) { wantInt(t, "queue", len(s.Queue), 1) }

var controlRows = []row{
	{what: "Stop cancels the run; its end says so", from: sess(stateRunning, autoRun),
		ev: click(render.ActionStop), to: stateRunning,
		effects: []string{"log stop requested", "cancel the run", "save"},
		check: func(t *testing.T, s Session) {
			wantString(t, "stopped by", s.StoppedBy, "U1")
			wantBool(t, "auto-run", s.AutoRun, false)
		}},
	{what: "Stop while a step waits takes its buttons away", from: sess(stateAwaitingApproval, pendingStep),
		ev: click(render.ActionStop), to: stateAwaitingApproval,
		effects: []string{"log stop requested", "cancel the run", "forget the step", "update 1.7 h9_approval_stopped", "save"},
		check:   func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "Stop while planning", from: sess(statePlanning, planMode),
		ev: click(render.ActionStop), to: statePlanning,
		effects: []string{"log stop requested", "cancel the run", "save"}},
	{what: "Stop with nothing running", from: sess(stateIdle),
		ev: click(render.ActionStop), to: stateIdle,
		effects: []string{"ephemeral to U1: Nothing is running in this session."}},
	{what: "Resume after a stall restarts auto-run with the counter at zero", from: sess(stateStalled, stuck(3, 1), func(s *Session) { s.Progress.Completed = 1 }),
		ev: click(render.ActionResume), to: stateRunning,
		effects: []string{"save", "start continue (default)"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "auto-run", s.AutoRun, true)
			wantInt(t, "stuck", s.Stuck, 0)
			wantInt(t, "prev done", s.PrevDone, 1)
		}},
	{what: "Resume after an interrupted step continues confirming each step", from: sess(stateInterrupted, confirmMode),
		ev: click(render.ActionResume), to: stateRunning,
		effects: []string{"save", "start continue (auto-edit)"}},
	{what: "Resume while running", from: sess(stateRunning),
		ev: click(render.ActionResume), to: stateRunning,
		effects: []string{"ephemeral to U1: This session is already running."}},
	{what: "Resume with nothing to resume", from: sess(stateDone),
		ev: click(render.ActionResume), to: stateDone,
		effects: []string{"ephemeral to U1: There is nothing to resume in this session."}},
	{what: "Retry asks the failed run's request again", from: sess(stateError, func(s *Session) { s.Request = agent.Request{Intent: agent.IntentReply, Text: "fix the test"} }),
		ev: click(render.ActionRetry), to: stateRunning,
		effects: []string{"save", "start reply (default) fix the test"}},
	{what: "Retry while planning", from: sess(statePlanning, planMode),
		ev: click(render.ActionRetry), to: statePlanning,
		effects: []string{"ephemeral to U1: This session is already running."}},
	{what: "Retry without a failed run", from: sess(stateIdle),
		ev: click(render.ActionRetry), to: stateIdle,
		effects: []string{"ephemeral to U1: There is no failed run to retry in this session."}},
}

var replyRows = []row{
	{what: "a reply while planning is queued", from: sess(statePlanning, planMode), ev: reply(), to: statePlanning,
		effects: []string{"save", "react 1.9 hourglass_flowing_sand"}, check: queuedOnce},
	{what: "a reply while running is queued", from: sess(stateRunning), ev: reply(), to: stateRunning,
		effects: []string{"save", "react 1.9 hourglass_flowing_sand"}, check: queuedOnce},
	{what: "a reply while a step waits is queued", from: sess(stateAwaitingApproval, pendingStep), ev: reply(), to: stateAwaitingApproval,
		effects: []string{"save", "react 1.9 hourglass_flowing_sand"}, check: queuedOnce},
	{what: "a reply in plan mode plans again", from: sess(stateIdle, planMode), ev: reply(), to: statePlanning,
		effects: []string{"save", "start reply (plan) also b"}},
	{what: "a reply after a stall is guidance that resumes auto-run", from: sess(stateStalled, stuck(3, 0)), ev: reply(), to: stateRunning,
		effects: []string{"save", "start reply (default) also b"},
		check: func(t *testing.T, s Session) {
			wantBool(t, "auto-run", s.AutoRun, true)
			wantInt(t, "stuck", s.Stuck, 0)
		}},
	{what: "a reply after an interrupted step goes on without it", from: sess(stateInterrupted, pendingStep), ev: reply(), to: stateRunning,
		effects: []string{"save", "start reply (auto-edit) also b"}, check: func(t *testing.T, s Session) { wantNoApproval(t, s) }},
	{what: "a reply when done is follow-up work", from: sess(stateDone), ev: reply(), to: stateRunning,
		effects: []string{"save", "start reply (default) also b"}},
	{what: "a reply after Cancel plans again", from: sess(stateCancelled, planMode), ev: reply(), to: statePlanning,
		effects: []string{"save", "start reply (plan) also b"}},
	{what: "a reply after an error is the next request", from: sess(stateError), ev: reply(), to: stateRunning,
		effects: []string{"save", "start reply (default) also b"},
		check: func(t *testing.T, s Session) {
			if s.Request != (agent.Request{Intent: agent.IntentReply, Text: "also b"}) {
				t.Errorf("request = %+v, want the reply", s.Request)
			}
		}},
}

package bot

import (
	"fmt"
	"slices"
	"testing"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// budget gives a session the configured budget step and a token total.
func budget(step, used int) func(*Session) {
	return func(s *Session) {
		s.rules.budget = step
		s.Tokens = agent.Usage{PromptTokens: used - used/10, CompletionTokens: used / 10, TotalTokens: used}
	}
}

func atBudget(req agent.Request) func(*Session) {
	return func(s *Session) { s.State, s.Request, s.BudgetTS = stateOverBudget, req, "1.8" }
}

func raised(n int) func(*Session) { return func(s *Session) { s.BudgetRaises = n } }

var (
	proceed       = agent.Request{Intent: agent.IntentProceed}
	continueReq   = agent.Request{Intent: agent.IntentContinue}
	errBudgetStop = fmt.Errorf("run: %w", agent.ErrBudget)
	errOverBudget = fmt.Errorf("run: %w", agent.ErrOverBudget)
	budgetParked  = []string{"log token budget reached", "post budget h9_budget", "save", "refresh"}
	// parkedAfterRun: a run that ends at the budget shows its final
	// checklist before the budget message (showFinalBefore).
	parkedAfterRun = []string{"save", "refresh", "flush the checklist", "log token budget reached", "post budget h9_budget"}
)

func wantRequest(want agent.Request) func(*testing.T, Session) {
	return func(t *testing.T, s Session) {
		t.Helper()
		if s.Request != want {
			t.Errorf("request = %+v, want %+v", s.Request, want)
		}
	}
}

var budgetRows = []row{
	{what: "a new session's first run is given the budget", from: Session{ID: "T1/C1/1.1", rules: tokenRules{budget: 5000}},
		ev: evCreate{owner: "U1", task: "fix it", mode: planning.PlanModeDefault}, to: stateRunning,
		effects: []string{"log session created", "save for the run's gate", "post the checklist", "start task (default) fix it within 5000 tokens gated"}},
	{what: "a run stopped after its step by the budget waits; Raise budget goes on from that step", from: sess(stateRunning, autoRun, budget(1000, 900)),
		ev: evRunDone{err: errBudgetStop, todos: items(completed, running), tokens: agent.Usage{TotalTokens: 1200}}, to: stateOverBudget,
		effects: slices.Concat([]string{"show 1/2 tasks", "forget the step"}, parkedAfterRun),
		check: func(t *testing.T, s Session) {
			wantRequest(proceed)(t, s)
			wantBool(t, "auto-run, back on after the raise", s.AutoRun, true)
			wantInt(t, "tokens", s.Tokens.TotalTokens, 1200)
		}},
	{what: "a plan run stopped by the budget goes on planning", from: sess(statePlanning, planMode, budget(1000, 900)),
		ev: evRunDone{planRun: true, err: errBudgetStop, tokens: agent.Usage{TotalTokens: 1100}}, to: stateOverBudget,
		effects: slices.Concat([]string{"show 0/0 tasks", "forget the step"}, parkedAfterRun), check: wantRequest(proceed)},
	{what: "a run refused at its start keeps its request, and a queued reply keeps waiting", from: sess(stateRunning, queued, budget(1000, 900),
		func(s *Session) { s.Request = agent.Request{Intent: agent.IntentReply, Text: "go"} }),
		ev: evRunDone{err: errOverBudget, todos: items(running), tokens: agent.Usage{TotalTokens: 1100}}, to: stateOverBudget,
		effects: slices.Concat([]string{"show 0/1 tasks", "forget the step"}, parkedAfterRun),
		check: func(t *testing.T, s Session) {
			wantRequest(agent.Request{Intent: agent.IntentReply, Text: "go"})(t, s)
			queuedOnce(t, s)
		}},
	{what: "auto-run's next run does not start over the budget", from: sess(stateRunning, autoRun, budget(1000, 900)),
		ev: evRunDone{todos: items(completed, running), tokens: agent.Usage{TotalTokens: 1001}}, to: stateOverBudget,
		effects: slices.Concat([]string{"show 1/2 tasks", "forget the step"}, parkedAfterRun), check: wantRequest(continueReq)},
	{what: "a finished session over its budget is done: nothing was stopped", from: sess(stateRunning, autoRun, budget(1000, 900)),
		ev: evRunDone{text: "All done.", todos: items(completed), tokens: agent.Usage{TotalTokens: 1500}}, to: stateDone,
		effects: []string{"show 1/1 tasks", "forget the step", "save", "refresh", "flush the checklist", "post h9_done"}},
	{what: "Raise budget adds the budget once more and runs the stopped request", from: sess(stateOverBudget, autoRun, budget(1000, 1200), atBudget(proceed)),
		ev: click(render.ActionRaiseBudget), to: stateRunning,
		effects: []string{"log budget raised", "update 1.8 h9_budget_raised", "save", "start proceed (default) within 2000 tokens"},
		check: func(t *testing.T, s Session) {
			wantInt(t, "raises", s.BudgetRaises, 1)
			wantString(t, "budget message", s.BudgetTS, "")
			wantBool(t, "auto-run", s.AutoRun, true)
		}},
	{what: "Raise budget not enough: stopped again, with a new button", from: sess(stateOverBudget, budget(1000, 2500), raised(0), atBudget(continueReq)),
		ev: click(render.ActionRaiseBudget), to: stateOverBudget,
		effects: slices.Concat([]string{"log budget raised", "update 1.8 h9_budget_raised"}, budgetParked),
		check:   func(t *testing.T, s Session) { wantInt(t, "raises", s.BudgetRaises, 1) }},
	{what: "Raise budget when nothing waits for it", from: sess(stateIdle, budget(1000, 10)),
		ev: click(render.ActionRaiseBudget), to: stateIdle,
		effects: []string{"ephemeral to U1: This session is not stopped at its token budget, so nothing happened."}},
	{what: "a reply over the budget waits in the queue", from: sess(stateOverBudget, budget(1000, 1200), atBudget(proceed)),
		ev: reply(), to: stateOverBudget,
		effects: []string{"save", "react 1.9 hourglass_flowing_sand", "ephemeral to U1: This session has used its token budget, so your reply waits: " +
			"it goes to the agent once the session's owner or an h9 admin presses Raise budget."},
		check: func(t *testing.T, s Session) { queuedOnce(t, s); wantRequest(proceed)(t, s) }},
	{what: "a reply once the configured budget no longer stops the session runs", from: sess(stateOverBudget, budget(2000, 1200), atBudget(proceed)),
		ev: reply(), to: stateRunning, effects: []string{"save", "start reply (default) also b within 2000 tokens"}},
	{what: "a reply to a resting session over its budget starts nothing", from: sess(stateIdle, budget(1000, 1200)),
		ev: reply(), to: stateOverBudget, effects: budgetParked,
		check: wantRequest(agent.Request{Intent: agent.IntentReply, Text: "also b"})},
	{what: "within the budget a reply's run gets the budget", from: sess(stateDone, budget(1000, 10), raised(2)),
		ev: reply(), to: stateRunning, effects: []string{"save", "start reply (default) also b within 3000 tokens"}},
	{what: "Approve & auto-run with the budget spent on planning", from: sess(stateAwaitingReview, reviewOpen, budget(1000, 1100)),
		ev: click(render.ActionApproveAuto), to: stateOverBudget,
		effects: slices.Concat([]string{"update 1.5 h9_review_decided", "log review decided"}, budgetParked),
		check: func(t *testing.T, s Session) {
			wantRequest(agent.Request{Intent: agent.IntentExecute})(t, s)
			wantBool(t, "auto-run", s.AutoRun, true)
		}},
	{what: "Resume after a stall over the budget", from: sess(stateStalled, budget(1000, 1100)),
		ev: click(render.ActionResume), to: stateOverBudget, effects: budgetParked, check: wantRequest(continueReq)},
	{what: "Retry over the budget", from: sess(stateError, budget(1000, 1100)),
		ev: click(render.ActionRetry), to: stateOverBudget, effects: budgetParked},
	{what: "a restart resumes nothing over the budget", from: sess(stateRunning, autoRun, budget(1000, 1100)),
		ev: evRecover{}, to: stateOverBudget, effects: slices.Concat([]string{"log resuming after a restart", notice(restartNotice)}, budgetParked)},
	{what: "over budget is not in flight: a restart leaves it", from: sess(stateOverBudget, budget(1000, 1100), atBudget(proceed)),
		ev: evRecover{}, to: stateOverBudget},
	{what: "Stop over the budget", from: sess(stateOverBudget, budget(1000, 1100), atBudget(proceed)),
		ev: click(render.ActionStop), to: stateOverBudget, effects: []string{"ephemeral to U1: Nothing is running in this session."}},
	{what: "Resume over the budget is not Raise budget", from: sess(stateOverBudget, budget(1000, 1100), atBudget(proceed)),
		ev: click(render.ActionResume), to: stateOverBudget, effects: []string{"ephemeral to U1: There is nothing to resume in this session."}},
	{what: "Retry over the budget is not Raise budget", from: sess(stateOverBudget, budget(1000, 1100), atBudget(proceed)),
		ev: click(render.ActionRetry), to: stateOverBudget, effects: []string{"ephemeral to U1: There is no failed run to retry in this session."}},
	{what: "the budget message's ts is kept for the raise", from: sess(stateOverBudget, budget(1000, 1100), pendingPosts(postBudget)),
		ev: evPosted{key: "budget-1", ts: "1.8"}, to: stateOverBudget, effects: []string{"save"},
		check: func(t *testing.T, s Session) { wantString(t, "budget message", s.BudgetTS, "1.8") }},
	{what: "a load takes the agent's larger total, never a smaller one", from: sess(stateIdle, budget(1000, 500)),
		ev: evLoaded{tokens: agent.Usage{TotalTokens: 700}}, to: stateIdle,
		check: func(t *testing.T, s Session) {
			wantInt(t, "tokens", s.Tokens.TotalTokens, 700)
			back, _ := transition(s, evLoaded{tokens: agent.Usage{TotalTokens: 600}})
			wantInt(t, "tokens after an older total", back.Tokens.TotalTokens, 700)
		}},
}

// The budget counts the configured step once per raise; none configured
// is no budget, whatever was raised.
func TestSessionBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		step, raises, used, want int
		over                     bool
	}{
		{0, 0, 1 << 40, 0, false},
		{0, 3, 5, 0, false},
		{1000, 0, 1000, 1000, false},
		{1000, 0, 1001, 1000, true},
		{1000, 2, 2999, 3000, false},
	} {
		s := sess(stateIdle, budget(tc.step, tc.used), raised(tc.raises))
		if got := s.budget(); got != tc.want || s.overBudget() != tc.over {
			t.Errorf("%+v: budget %d over %t", tc, got, s.overBudget())
		}
	}
}

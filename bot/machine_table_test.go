package bot

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// The state × event table (ARCHITECTURE.md, "A session's life").
// Every pair of tableStates × allEvents is either checked by a row
// (machine_rows_*_test.go, and the rows generated below for handling that
// does not look at the state) or named in cannotHappen with the reason;
// TestTransitions fails on a pair that is neither, and on one that is both.

// tableStates is every state a session can be in, and "" for a thread
// whose session is not created yet (the table's "new").
var tableStates = append([]state{""}, allStates...)

// allEvents is one of each kind of event, a click per button.
// TestAllEventsListed proves the list complete from the source.
var allEvents = []event{
	evCreate{}, evRunDone{}, evRecover{}, evLoaded{}, evChecklistPosted{},
	evApprovalAsked{}, evApprovalShown{}, evApprovalUnseen{}, evReply{},
	evTodosCancelled{}, evCancelFailed{}, evPrepared{}, evOutcome{}, evPushed{}, evPullRequest{}, evPosted{},
	click(render.ActionApproveAuto), click(render.ActionApproveConfirm), click(render.ActionKeepPlanning), click(render.ActionCancel),
	click(render.ActionStepApprove), click(render.ActionStepReject), click(render.ActionStop), click(render.ActionResume),
	click(render.ActionRetry), click(render.ActionRaiseBudget), click(render.ActionPushBranch), click(render.ActionOpenPR),
	evNetworkRefused{}, evRepoAllowed{}, netClick(render.ActionNetAllowSession, false), netClick(render.ActionNetAllowRepo, false), netClick(render.ActionNetDeny, false),
	evFollowDue{}, evFollowPolled{}, evFeedbackPushed{}, evRepliesSent{},
	click(render.ActionAddressFeedback), click(render.ActionIgnoreFeedback),
}

// eventName names an event kind for the table's pairs.
func eventName(ev event) string {
	switch e := ev.(type) {
	case evClick:
		return "click " + strings.TrimPrefix(e.action, "h9_")
	case evRunDone:
		return "run done"
	case evNetworkClick:
		return "click " + strings.TrimPrefix(e.action, "h9_")
	}
	return strings.TrimPrefix(reflect.TypeOf(ev).Name(), "ev")
}

func stateName(s state) string {
	if s == "" {
		return "new"
	}
	return string(s)
}

func pairName(s state, ev event) string { return stateName(s) + " + " + eventName(ev) }

// never is a set of pairs that cannot happen, and why.
type never struct {
	events []event
	states func(state) bool // the states the events cannot reach
	why    string
}

func except(sts ...state) func(state) bool {
	return func(s state) bool { return !slices.Contains(sts, s) }
}

var (
	runEvents = []event{evRunDone{}, evApprovalAsked{}, evApprovalShown{}, evApprovalUnseen{}, evTodosCancelled{},
		evCancelFailed{}, evPrepared{}, evOutcome{}, evPushed{}, evPullRequest{}, evPosted{}, evChecklistPosted{}, evLoaded{}, evRecover{},
		evNetworkRefused{}, evRepoAllowed{}}
	userEvents = []event{evReply{}, click(render.ActionApproveAuto), click(render.ActionApproveConfirm), click(render.ActionKeepPlanning),
		click(render.ActionCancel), click(render.ActionStepApprove), click(render.ActionStepReject), click(render.ActionStop),
		click(render.ActionResume), click(render.ActionRetry), click(render.ActionRaiseBudget), click(render.ActionPushBranch), click(render.ActionOpenPR),
		netClick(render.ActionNetAllowSession, false), netClick(render.ActionNetAllowRepo, false), netClick(render.ActionNetDeny, false)}
	exists = func(s state) bool { return s != "" }
)

var cannotHappen = []never{
	{events: slices.Concat(runEvents, userEvents, followEvents), states: func(s state) bool { return s == "" },
		why: "an event reaches the machine only through the actor holding the session's record; in a thread without one, the inbox answers a reply or click itself (inbox.go) and nothing else has a run"},
	{events: []event{evCreate{}}, states: exists,
		why: "the actor creates a session only in a thread that has none (msgCreate, msgMention)"},
	{events: []event{evRunDone{}}, states: except(statePlanning, stateRunning, stateAwaitingApproval),
		why: "a run starts with the state set to planning or running (startRun) and only its own end leaves those states and awaiting approval; setting up has a preparation in flight, which ends with Prepared"},
	{events: []event{evApprovalAsked{}}, states: except(stateRunning),
		why: "only a run in confirm-each-step mode asks (never a plan run), and it waits for the answer before asking again"},
	{events: []event{evApprovalShown{}, evApprovalUnseen{}}, states: except(stateRunning),
		why: "the approval's post reports at once, on the actor, in the move ApprovalAsked began (effPostApproval)"},
	{events: []event{evTodosCancelled{}, evCancelFailed{}}, states: except(stateAwaitingReview),
		why: "the Cancel button's effect reports at once, on the actor, while the review is still open (effCancelTodos)"},
	{events: []event{evPrepared{}}, states: except(stateSettingUp),
		why: "only setting up has a preparation in flight, and nothing but its end leaves that state"},
}

// cannotHappenPairs is cannotHappen as pair → reason.
func cannotHappenPairs() map[string]string {
	out := map[string]string{}
	for _, n := range cannotHappen {
		for _, st := range tableStates {
			if !n.states(st) {
				continue
			}
			for _, ev := range n.events {
				out[pairName(st, ev)] = n.why
			}
		}
	}
	return out
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	rows := slices.Concat(startRows, runDoneRows, reviewRows, stepRows, controlRows, replyRows, recoverRows,
		bookkeepingRows, budgetRows, repoRows, anyStateRows(), refusalRows(), networkRows(), followRows())
	covered := map[string]bool{}
	for _, r := range rows {
		pair := pairName(r.from.State, r.ev)
		covered[pair] = true
		t.Run(pair+": "+r.what, func(t *testing.T) { checkRow(t, r) })
	}
	impossible := cannotHappenPairs()
	for _, st := range tableStates {
		for _, ev := range allEvents {
			pair := pairName(st, ev)
			why, never := impossible[pair]
			switch {
			case covered[pair] && never:
				t.Errorf("%s has a row but is listed as cannot happen (%s)", pair, why)
			case !covered[pair] && !never:
				t.Errorf("%s has no row and is not listed as cannot happen", pair)
			}
		}
	}
}

func checkRow(t *testing.T, r row) {
	before := r.from.clone()
	next, effs := transition(r.from, r.ev)
	if !reflect.DeepEqual(r.from, before) {
		t.Errorf("transition changed its input session")
	}
	if next.State != r.to {
		t.Errorf("state = %q, want %q", next.State, r.to)
	}
	var got []string
	for _, e := range effs {
		got = append(got, e.String())
	}
	if diff := cmp.Diff(r.effects, got); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if r.check != nil {
		r.check(t, next)
	}
}

// inEvery makes the row r once for each state keep accepts: the events
// whose handling does not look at the state, checked in each.
func inEvery(keep func(state) bool, r row, opts ...func(*Session)) []row {
	var out []row
	for _, st := range allStates {
		if keep(st) {
			rr := r
			rr.from, rr.to = sess(st, opts...), st
			out = append(out, rr)
		}
	}
	return out
}

func all(state) bool { return true }

// anyStateRows: what the run's bookkeeping does is the same in every state.
func anyStateRows() []row {
	return slices.Concat(
		inEvery(all, row{what: "the agent's larger token total is taken", ev: evLoaded{tokens: agent.Usage{TotalTokens: 20}},
			check: func(t *testing.T, s Session) { wantInt(t, "tokens", s.Tokens.TotalTokens, 20) }}),
		inEvery(all, row{what: "a checklist ts already saved needs no save", ev: evChecklistPosted{ts: "1.2"}}),
		inEvery(all, row{what: "a pending post posted is no longer pending", ev: evPosted{key: "notice-1", ts: "1.9"}, effects: []string{"save"},
			check: func(t *testing.T, s Session) { wantPosts(t, s) }}, pendingPosts(postNotice)),
		inEvery(all, row{what: "an outcome due becomes its pending posts", ev: evOutcome{msgs: []render.Message{text("the changes")}},
			effects: []string{notice("the changes"), "save"}}, withRepo(true), outcomeDue),
		inEvery(all, row{what: "a push's result is said", ev: evPushed{msg: text("Pushed")}, effects: []string{notice("Pushed")}}, withRepo(true)),
		inEvery(all, row{what: "the pull request's URL is kept", ev: evPullRequest{url: "https://example.com/pull/1"}, effects: []string{"save"}}, withRepo(true)),
		inEvery(func(s state) bool { return !s.inFlight() }, row{what: "a session at rest needs nothing at a restart", ev: evRecover{}}),
	)
}

// refusal is a click whose state leaves nothing to do: the user is told.
func refusal(keep func(state) bool, action, words string) []row {
	return inEvery(keep, row{what: "refused", ev: click(action), effects: []string{"ephemeral to U1: " + words}})
}

func inFlight(s state) bool { return s.inFlight() }

func refusalRows() []row {
	notInFlightExcept := func(sts ...state) func(state) bool {
		return func(s state) bool { return !s.inFlight() && !slices.Contains(sts, s) }
	}
	closed := "This review is no longer open, so nothing happened."
	noStep := "This step is no longer waiting for approval, so nothing happened."
	var out []row
	for _, a := range []string{render.ActionApproveAuto, render.ActionApproveConfirm, render.ActionKeepPlanning, render.ActionCancel} {
		out = append(out, refusal(except(stateAwaitingReview), a, closed)...)
	}
	for _, a := range []string{render.ActionStepApprove, render.ActionStepReject} {
		out = append(out, refusal(except(stateAwaitingApproval), a, noStep)...)
	}
	for _, a := range []string{render.ActionPushBranch, render.ActionOpenPR} {
		out = append(out, refusal(all, a, "This session has no repository checkout, so there is nothing to push.")...)
	}
	return slices.Concat(out,
		refusal(notInFlightExcept(), render.ActionStop, "Nothing is running in this session."),
		refusal(inFlight, render.ActionResume, "This session is already running."),
		refusal(notInFlightExcept(stateStalled, stateInterrupted), render.ActionResume, "There is nothing to resume in this session."),
		refusal(inFlight, render.ActionRetry, "This session is already running."),
		refusal(notInFlightExcept(stateError, stateSetupFailed), render.ActionRetry, "There is no failed run to retry in this session."),
		refusal(except(stateOverBudget), render.ActionRaiseBudget, "This session is not stopped at its token budget, so nothing happened."),
	)
}

// TestAllEventsListed: every type the machine applies (a method
// apply(*move) in bot's source) and every button action render defines
// is in allEvents, so a new event or button cannot skip the table.
func TestAllEventsListed(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, ev := range allEvents {
		listed[reflect.TypeOf(ev).Name()] = true
		if c, ok := ev.(evClick); ok {
			listed[c.action] = true
		}
		if c, ok := ev.(evNetworkClick); ok {
			listed[c.action] = true
		}
	}
	for _, name := range eventTypes(t, ".") {
		if !listed[name] {
			t.Errorf("event type %s is not in allEvents", name)
		}
	}
	for _, action := range actionConsts(t, "render") {
		if !listed[action] {
			t.Errorf("button action %s has no click in allEvents", action)
		}
	}
}

// parseDir parses the package's non-test files.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// eventTypes names the receiver of every method apply(m *move).
func eventTypes(t *testing.T, dir string) []string {
	var out []string
	for _, f := range parseDir(t, dir) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "apply" || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok && isIdent(star.X, "move") {
				out = append(out, receiverName(fn.Recv.List[0].Type))
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d event types in %s: the parse is broken", len(out), dir)
	}
	return out
}

func isIdent(e ast.Expr, name string) bool { id, ok := e.(*ast.Ident); return ok && id.Name == name }

func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// actionConsts is the value of every constant Action… in dir.
func actionConsts(t *testing.T, dir string) []string {
	var out []string
	for _, f := range parseDir(t, dir) {
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Action") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
			return true
		})
	}
	if len(out) < 10 {
		t.Fatalf("found only %d button actions in %s: the parse is broken", len(out), dir)
	}
	return out
}

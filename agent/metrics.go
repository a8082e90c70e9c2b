package agent

import (
	"errors"
	"slices"
	"time"

	"github.com/h9-app/h9/agent/openai"
)

// Metrics is told what the engine does, to be counted (cmd/h9 counts it
// with Prometheus). Its methods are called from the runs' goroutines: they
// must be cheap, must not block and must be safe for concurrent use. Every
// string they get is from a small fixed set (RunOutcomes, openai.Failures,
// the intents' names), never a session id. Config.Metrics nil counts
// nothing.
type Metrics interface {
	openai.Metrics
	RunMetrics
}

// RunMetrics hears every Run.
type RunMetrics interface {
	// RunStarted: a run of an intent ("task", "reply", "execute",
	// "continue"; "none" for an invalid one) began.
	RunStarted(intent string)
	// RunEnded: that run ended after d; outcome is one of RunOutcomes.
	RunEnded(intent, outcome string, d time.Duration)
}

// noMetrics counts nothing: Config.Metrics's default.
type noMetrics struct{}

func (noMetrics) ModelRequest(time.Duration, string)     {}
func (noMetrics) Tokens(int, int, bool)                  {}
func (noMetrics) RunStarted(string)                      {}
func (noMetrics) RunEnded(string, string, time.Duration) {}

// The outcomes of a run, as RunEnded names them.
const (
	outcomeOK        = "ok"
	outcomeCancelled = "cancelled"
	outcomeStepLimit = "step_limit"
	outcomeCut       = "answer_cut"
	outcomeModel     = "model_error"
	outcomeStore     = "store_error"
	outcomeWorkspace = "workspace_error"
	outcomeBusy      = "busy"
	outcomeInvalid   = "invalid"
	outcomeBudget    = "budget"
	outcomeOther     = "error"
)

// runOutcomes pairs each failure outcome with its sentinel, in the order
// they are tested (a cancelled run may also carry a model error).
var runOutcomes = []struct {
	name string
	err  error
}{
	{outcomeCancelled, ErrCancelled},
	{outcomeStepLimit, ErrStepLimit},
	{outcomeCut, ErrAnswerCut},
	{outcomeModel, ErrModel},
	{outcomeStore, ErrStore},
	{outcomeWorkspace, ErrWorkspace},
	{outcomeBusy, ErrBusy},
	{outcomeInvalid, ErrInvalidRequest},
	{outcomeInvalid, ErrInvalidMode},
	{outcomeBudget, ErrBudget}, // ErrOverBudget too
}

// RunOutcomes lists every outcome RunEnded reports, for metrics that show
// each at zero before it first happens.
func RunOutcomes() []string {
	out := []string{outcomeOK}
	for _, o := range runOutcomes {
		if !slices.Contains(out, o.name) {
			out = append(out, o.name)
		}
	}
	return append(out, outcomeOther)
}

// runOutcome names how a run that returned err ended.
func runOutcome(err error) string {
	if err == nil {
		return outcomeOK
	}
	for _, o := range runOutcomes {
		if errors.Is(err, o.err) {
			return o.name
		}
	}
	return outcomeOther
}

// intentLabel is the intent's name, "none" for one Run refuses.
func intentLabel(i Intent) string {
	if n, ok := intentNames[i]; ok {
		return n
	}
	return "none"
}

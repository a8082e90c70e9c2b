package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/h9-app/h9/agent/fakemodel"
)

// countingMetrics records what the engine reports, as cmd/h9's would count it.
type countingMetrics struct {
	mu                 sync.Mutex
	tries              []string // each try's failure, "" for a usable answer
	prompt, completion int
	estimated          int // answers whose usage h9 estimated
	started            []string
	ended              []string // intent/outcome
	inFlight           int
}

func (m *countingMetrics) ModelRequest(d time.Duration, failure string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d <= 0 {
		failure = "no time measured"
	}
	m.tries = append(m.tries, failure)
}

func (m *countingMetrics) Tokens(prompt, completion int, estimated bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompt += prompt
	m.completion += completion
	if estimated {
		m.estimated++
	}
}

func (m *countingMetrics) RunStarted(intent string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = append(m.started, intent)
	m.inFlight++
}

func (m *countingMetrics) RunEnded(intent, outcome string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d <= 0 {
		outcome += " (no time measured)"
	}
	m.ended = append(m.ended, intent+"/"+outcome)
	m.inFlight--
}

func (m *countingMetrics) snapshot() countingMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return countingMetrics{tries: slices.Clone(m.tries), prompt: m.prompt, completion: m.completion,
		estimated: m.estimated, started: slices.Clone(m.started), ended: slices.Clone(m.ended), inFlight: m.inFlight}
}

func withMetrics(m Metrics) func(*Config) { return func(c *Config) { c.Metrics = m } }

// Every try is counted with its failure's kind, retries included, and the
// answers' tokens as the endpoint reported them.
func TestMetricsCountEveryTryAndItsTokens(t *testing.T) {
	t.Parallel()
	m := &countingMetrics{}
	h := newHarness(t, withMetrics(m))
	h.srv.Enqueue(fakemodel.RateLimited(time.Millisecond), fakemodel.ServerError(),
		fakemodel.ToolCall(todoWriteName, fakemodel.TodoArgs("a:pending")), fakemodel.Text("done"))
	h.mustRun("s1", "go")
	got := m.snapshot()
	if want := []string{"rate_limit", "server", "", ""}; !slices.Equal(got.tries, want) {
		t.Errorf("tries %q, want %q", got.tries, want)
	}
	if want := []string{"task"}; !slices.Equal(got.started, want) {
		t.Errorf("runs started %q, want %q", got.started, want)
	}
	if want := []string{"task/ok"}; !slices.Equal(got.ended, want) || got.inFlight != 0 {
		t.Errorf("runs ended %q (%d in flight), want %q", got.ended, got.inFlight, want)
	}
	if got.prompt <= 0 || got.completion <= 0 || got.estimated != 0 {
		t.Errorf("tokens %d prompt, %d completion, %d estimated answers: want the fake's reported usage", got.prompt, got.completion, got.estimated)
	}
}

// Each way a run ends has its own outcome.
func TestMetricsNameEachRunOutcome(t *testing.T) {
	t.Parallel()
	m := &countingMetrics{}
	h := newHarness(t, withMetrics(m), func(c *Config) { c.MaxSteps = 2; c.MaxRetries = 1 })
	h.srv.Enqueue(fakemodel.InsufficientQuota())
	_, _, errQuota := h.run("s1", "go", RunOptions{})
	h.srv.Enqueue(fakemodel.ToolCall(todoWriteName, `{}`), fakemodel.ToolCall(todoWriteName, `{}`))
	_, _, errSteps := h.run("s2", "go", RunOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errCancelled := h.eng.Run(ctx, "s3", task("go"), RunOptions{})
	_, errInvalid := h.eng.Run(context.Background(), "s4", Request{}, RunOptions{})
	for _, err := range []error{errQuota, errSteps, errCancelled, errInvalid} {
		if err == nil {
			t.Fatal("a run that should fail succeeded")
		}
	}
	got := m.snapshot()
	want := []string{"task/model_error", "task/step_limit", "task/cancelled", "none/invalid"}
	if !slices.Equal(got.ended, want) {
		t.Errorf("outcomes %q, want %q", got.ended, want)
	}
	if !slices.Contains(got.tries, "quota") {
		t.Errorf("tries %q lack the quota failure", got.tries)
	}
}

// An answer without usage is counted as estimated tokens.
func TestMetricsMarkEstimatedTokens(t *testing.T) {
	t.Parallel()
	m := &countingMetrics{}
	h := newHarness(t, withMetrics(m), func(c *Config) {
		c.Model = noUsageModel{}
	})
	h.mustRun("s1", "go")
	if got := m.snapshot(); got.estimated != 1 || got.prompt <= 0 {
		t.Errorf("%d estimated answers, %d prompt tokens: want one estimate", got.estimated, got.prompt)
	}
}

// noUsageModel answers at once and reports no usage, like a local server.
type noUsageModel struct{}

func (noUsageModel) Complete(context.Context, ModelRequest) (Answer, error) {
	return Answer{Message: Message{Role: RoleAssistant, Content: "done"}, FinishReason: "stop"}, nil
}

// Every outcome has a name, and runOutcome never makes one up.
func TestMetricsLabelSetsAreClosed(t *testing.T) {
	t.Parallel()
	outcomes := RunOutcomes()
	for _, err := range []error{nil, ErrCancelled, ErrStepLimit, ErrAnswerCut, ErrModel, ErrStore, ErrWorkspace,
		ErrBusy, ErrInvalidRequest, ErrInvalidMode, ErrBudget, ErrOverBudget, errors.New("anything else"), fmt.Errorf("wrapped: %w", ErrStore)} {
		if o := runOutcome(err); !slices.Contains(outcomes, o) {
			t.Errorf("runOutcome(%v) = %q, not in %q", err, o, outcomes)
		}
	}
}

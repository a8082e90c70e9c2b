package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
)

// reported is the fake's usage so far, as h9 would count it.
func reported(h *harness) Usage {
	p, c := h.srv.Reported()
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// The session's total is the sum of what the endpoint reported over every
// run — planning, execution and compaction's own request — and survives a
// restart; each run's usage is its own share; the running figures come
// with EventUsage, the last one equal to the run's result.
func TestTokensAddUpToWhatTheEndpointReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ContextWindow = 1000 })
	h.setMode("s", planning.PlanModePlan)
	h.srv.Enqueue(fakemodel.ToolCall("todo_write", todoArgs(pending("a"))).WithUsage(40, 7), fakemodel.Text("Plan.").WithUsage(55, 3))
	plan, _ := h.mustRun("s", "plan it")
	if want := (Usage{PromptTokens: 95, CompletionTokens: 10, TotalTokens: 105}); plan.Usage != want || plan.Total != want {
		t.Fatalf("planning run: usage %+v total %+v, want %+v", plan.Usage, plan.Total, want)
	}

	h.setMode("s", planning.PlanModeDefault)
	before := reported(h)
	scriptUntilCompaction(h, fakemodel.Text(testSummary).WithUsage(120, 30))
	exec, rec := h.mustRunRequest("s", Request{Intent: IntentExecute})
	if len(rec.of(EventCompacted)) != 1 {
		t.Fatal("the script did not compact")
	}
	all := reported(h)
	runShare := Usage{PromptTokens: all.PromptTokens - before.PromptTokens, CompletionTokens: all.CompletionTokens - before.CompletionTokens}
	runShare.TotalTokens = runShare.PromptTokens + runShare.CompletionTokens
	if exec.Usage != runShare || exec.Total != all {
		t.Fatalf("execution run: usage %+v total %+v, want %+v and %+v", exec.Usage, exec.Total, runShare, all)
	}
	usage := rec.of(EventUsage)
	if len(usage) != 6 { // five steps and the summary
		t.Errorf("usage events = %d, want 6", len(usage))
	}
	for i := 1; i < len(usage); i++ {
		if usage[i].Total.TotalTokens <= usage[i-1].Total.TotalTokens {
			t.Errorf("usage event %d does not grow the total: %+v after %+v", i, usage[i].Total, usage[i-1].Total)
		}
	}
	if last := usage[len(usage)-1]; last.Total != exec.Total || last.Usage != exec.Usage {
		t.Errorf("last usage event %+v/%+v, result %+v/%+v", last.Usage, last.Total, exec.Usage, exec.Total)
	}
	if done := rec.of(EventDone)[0]; done.Total != exec.Total {
		t.Errorf("done total %+v, want %+v", done.Total, exec.Total)
	}

	h.reopen()
	snap, err := h.eng.Snapshot(context.Background(), "s")
	if err != nil || snap.Total != all {
		t.Fatalf("stored total %+v (%v), want %+v", snap.Total, err, all)
	}
}

// A failed run's tokens count too, and its result says so.
func TestTokensOfAFailedRunCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxSteps = 2 })
	h.srv.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"true"}`).WithUsage(10, 1),
		fakemodel.ToolCall("bash", `{"command":"true"}`).WithUsage(20, 2),
	)
	res, rec, err := h.run("s", "loop", RunOptions{})
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("err = %v, want the step limit", err)
	}
	want := Usage{PromptTokens: 30, CompletionTokens: 3, TotalTokens: 33}
	if res.Total != want || rec.of(EventError)[0].Total != want {
		t.Fatalf("total %+v / %+v, want %+v", res.Total, rec.of(EventError)[0].Total, want)
	}
	if !strings.Contains(rec.of(EventError)[0].Text, "step limit") {
		t.Errorf("error words %q", rec.of(EventError)[0].Text)
	}
}

// encodeState writes what json.Marshal writes, and reads back.
func TestEncodeStateIsJSONMarshal(t *testing.T) {
	t.Parallel()
	exit := 2
	st := sessionState{Total: Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13, Estimated: true}, LastPrompt: 77}
	st.Work.Track([]planning.TodoItem{inProgress("a")})
	st.Work.Record(planning.ToolRun{Tool: "bash", Target: `echo "<hi>"`, Failed: true, Exit: &exit})
	for _, s := range []sessionState{{}, st} {
		got, err := encodeState(s)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(s)
		if string(got) != string(want) {
			t.Errorf("encodeState:\n%s\njson.Marshal:\n%s", got, want)
		}
		back, err := decodeState(got)
		if err != nil || back.Total != s.Total || back.LastPrompt != s.LastPrompt || len(back.Work.Working) != len(s.Work.Working) {
			t.Errorf("read back %+v, %v", back, err)
		}
	}
}

// An answer refused and asked again (an empty one) cost tokens too: the
// session counts what the endpoint reported for it, whether the next try
// succeeds or the run fails.
func TestTokensOfRefusedAnswersCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.EmptyAnswer("length").WithUsage(30, 200), fakemodel.Text("Done.").WithUsage(31, 2))
	ok, _ := h.mustRun("s", "answer at last")
	if want := (Usage{PromptTokens: 61, CompletionTokens: 202, TotalTokens: 263}); ok.Usage != want || ok.Usage != reported(h) {
		t.Fatalf("usage %+v, want %+v (reported %+v)", ok.Usage, want, reported(h))
	}

	h.srv.Enqueue(fakemodel.EmptyAnswer("stop").WithUsage(40, 1), fakemodel.EmptyAnswer("stop").WithUsage(41, 1))
	failed, _, err := h.run("s", "say nothing", RunOptions{})
	if !errors.Is(err, ErrEmptyReply) {
		t.Fatalf("err = %v, want the empty answer reported", err)
	}
	if want := (Usage{PromptTokens: 81, CompletionTokens: 2, TotalTokens: 83}); failed.Usage != want || failed.Total != reported(h) {
		t.Fatalf("failed run: usage %+v total %+v, want %+v and %+v", failed.Usage, failed.Total, want, reported(h))
	}
}

package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	goopenai "github.com/sashabaranov/go-openai"
)

func TestStepLimitEndsLoopingModel(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxSteps = 3 })
	h.srv.SetHandler(func(goopenai.ChatCompletionRequest) fakemodel.Reply {
		return fakemodel.ToolCall("todo_write", `{}`)
	})
	_, rec, err := h.run("s", "loop forever", RunOptions{})
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("err = %v, want ErrStepLimit", err)
	}
	if h.srv.Calls() != 3 {
		t.Errorf("model calls = %d, want 3", h.srv.Calls())
	}
	evs := rec.all()
	if last := evs[len(evs)-1]; last.Kind != EventError || !strings.Contains(last.Text, "step limit") {
		t.Errorf("last event = %v %q", last.Kind, last.Text)
	}
}

func TestCancelStopsLongBash(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCalls(
		fakemodel.C("bash", `{"command":"sleep 100"}`),
		fakemodel.C("bash", `{"command":"echo never"}`),
	))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	opts := RunOptions{Events: func(ev Event) {
		rec.add(ev)
		if ev.Kind == EventToolStarted {
			time.AfterFunc(100*time.Millisecond, cancel)
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := h.eng.Run(ctx, "s", task("sleep"), opts)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if got := len(rec.of(EventToolStarted)); got != 1 {
		t.Errorf("tools started = %d, want 1 (the second call must not run)", got)
	}
	// Every call was answered, so the next run's history is valid.
	h.srv.Enqueue(fakemodel.Text("back"))
	h.mustRun("s", "again")
	results := toolMessages(h.lastRequest())
	if len(results) != 2 || !strings.Contains(results[0].Content, "[cancelled]") || !strings.Contains(results[1].Content, "not run") {
		t.Errorf("results after cancel = %+v", results)
	}
	checkPairs(t, h.lastRequest().Messages)
}

func TestEventOrder(t *testing.T) {
	h := newHarness(t)
	items := []planning.TodoItem{todo("1", "say hi", planning.TodoInProgress)}
	h.srv.Enqueue(
		fakemodel.Reply{Content: "Let me plan.", Calls: []fakemodel.Call{fakemodel.C("todo_write", todoArgs(items...))}},
		fakemodel.ToolCall("bash", `{"command":"echo hi"}`),
		fakemodel.Text("All done."),
	)
	_, rec := h.mustRun("s", "say hi")
	type ev struct {
		Kind    EventKind
		Text    string
		Answer  int
		Tool    string
		Summary string
		IsError bool
		Output  string
	}
	var got []ev
	for _, e := range rec.all() {
		if e.SessionID != "s" {
			t.Errorf("event %v has session %q", e.Kind, e.SessionID)
		}
		got = append(got, ev{e.Kind, e.Text, e.Answer, e.Tool, e.Summary, e.IsError, e.Output})
	}
	want := []ev{
		{Kind: EventRunStarted},
		{Kind: EventTextDelta, Text: "Let me plan.", Answer: 1},
		{Kind: EventUsage},
		{Kind: EventText, Text: "Let me plan.", Answer: 1},
		{Kind: EventToolStarted, Tool: "todo_write", Summary: "0/1 tasks"},
		{Kind: EventToolFinished, Tool: "todo_write", Output: rec.of(EventToolFinished)[0].Output},
		{Kind: EventTodos},
		{Kind: EventUsage},
		{Kind: EventToolStarted, Tool: "bash", Summary: "echo hi"},
		{Kind: EventToolFinished, Tool: "bash", Output: "hi\n[exit code 0]"},
		{Kind: EventTextDelta, Text: "All done.", Answer: 3},
		{Kind: EventUsage},
		{Kind: EventDone, Text: "All done.", Answer: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if u := rec.of(EventDone)[0].Usage; u.TotalTokens == 0 {
		t.Errorf("done usage = %+v, want tokens", u)
	}
}

func TestParallelCallsAnsweredInOrderWithIDs(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.ToolCalls(
		fakemodel.Call{ID: "c-1", Name: "bash", Args: `{"command":"echo one"}`},
		fakemodel.Call{ID: "c-2", Name: "bash", Args: `{"command":"echo two"}`},
		fakemodel.Call{ID: "c-3", Name: "read_file", Args: `{"path":"missing.txt"}`},
	), fakemodel.Text("ok"))
	h.mustRun("s", "go")
	var got [][2]string
	for _, m := range toolMessages(h.lastRequest()) {
		got = append(got, [2]string{m.ToolCallID, strings.SplitN(m.Content, "\n", 2)[0]})
	}
	want := [][2]string{{"c-1", "one"}, {"c-2", "two"}, {"c-3", got[2][1]}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got[2][1], "Error:") {
		t.Errorf("missing file result = %q, want an error", got[2][1])
	}
}

func TestSameSessionIsBusy(t *testing.T) {
	h := newHarness(t)
	h.srv.Enqueue(fakemodel.Text("slow").WithLatency(2 * time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := h.eng.Run(context.Background(), "s", task("first"), RunOptions{})
		done <- err
	}()
	for h.srv.Calls() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := h.eng.Run(context.Background(), "s", task("second"), RunOptions{}); !errors.Is(err, ErrBusy) {
		t.Errorf("second run err = %v, want ErrBusy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestManySessionsConcurrently(t *testing.T) {
	h := newHarness(t)
	// One script per session, keyed by the session id the agent sends as req.User.
	h.srv.SetHandler(func(req goopenai.ChatCompletionRequest) fakemodel.Reply {
		if len(toolMessages(req)) < 2 {
			return fakemodel.ToolCall("write_file", fmt.Sprintf(`{"path":"%s.txt","content":"x"}`, req.User)).WithLatency(10 * time.Millisecond)
		}
		return fakemodel.Text("done " + req.User)
	})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%d", i)
			res, err := h.eng.Run(context.Background(), id, task("work"), RunOptions{})
			if err == nil && res.Text != "done "+id {
				err = fmt.Errorf("%s got %q", id, res.Text)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

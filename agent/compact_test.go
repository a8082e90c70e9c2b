package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/planning"
	goopenai "github.com/sashabaranov/go-openai"
)

const testSummary = "**Goal:** build the server\n**Progress:** wrote the plan\n**Next Steps:** write the handler"

// scriptUntilCompaction queues a run whose fourth reply reports a prompt
// over 80% of a 1000-token window, so the next step compacts. The first
// reply has three parallel calls, so the kept tail would start on a tool
// result unless the split moves back to their assistant message. The
// calls before the todo_write are the work behind its one completed todo.
func scriptUntilCompaction(h *harness, summary fakemodel.Reply) {
	items := []planning.TodoItem{
		todo("a", "write handler.go", planning.TodoPending),
		todo("b", "wire the router", planning.TodoInProgress),
		todo("c", "create go.mod", planning.TodoCompleted),
	}
	h.srv.Enqueue(
		fakemodel.ToolCalls(
			fakemodel.C("bash", `{"command":"echo one"}`),
			fakemodel.C("bash", `{"command":"echo two"}`),
			fakemodel.C("todo_write", todoArgs(items...)),
		).WithUsage(100, 10),
		fakemodel.ToolCall("bash", `{"command":"echo three"}`).WithUsage(200, 10),
		fakemodel.ToolCall("bash", `{"command":"echo four"}`).WithUsage(300, 10),
		fakemodel.ToolCall("bash", `{"command":"echo five"}`).WithUsage(900, 10),
		summary,
		fakemodel.Text("finished"),
	)
}

func TestCompactionSummarisesAndInjectsActiveTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ContextWindow = 1000 })
	scriptUntilCompaction(h, fakemodel.Text(testSummary))
	_, rec := h.mustRun("s", "build the server")

	reqs := h.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("model requests = %d, want 6", len(reqs))
	}
	before, summaryReq, after := reqs[3].Messages[1:], reqs[4], reqs[5].Messages[1:]
	if summaryReq.Messages[0].Content != summarySystemPrompt || len(summaryReq.Tools) != 0 {
		t.Errorf("summary request is not the summariser call: %+v", summaryReq.Messages[0])
	}
	if !strings.Contains(summaryReq.Messages[1].Content, "build the server") {
		t.Errorf("summariser did not get the old messages:\n%s", summaryReq.Messages[1].Content)
	}

	wantSummary := summaryMarker + "\n" + testSummary + "\n\n## Active Tasks\n[ ] write handler.go\n[>] wire the router"
	if diff := cmp.Diff(wantSummary, after[0].Content); diff != "" {
		t.Errorf("summary message (-want +got):\n%s", diff)
	}
	// Only the user prompt was old enough: the cut moved back from the
	// tool results to the assistant message that made the calls.
	if diff := cmp.Diff(before[1:], after[1:len(before)]); diff != "" {
		t.Errorf("kept messages (-want +got):\n%s", diff)
	}
	checkPairs(t, after)
	if got := rec.of(EventCompacted); len(got) != 1 {
		t.Errorf("compacted events = %d, want 1", len(got))
	}

	// The compacted history is what a new engine loads.
	h.reopen()
	h.srv.Enqueue(fakemodel.Text("again"))
	h.mustRun("s", "more")
	if got := h.lastRequest().Messages[1].Content; got != wantSummary {
		t.Errorf("after restart the history starts with %q", got)
	}
}

func TestCompactionFailureKeepsHistory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ContextWindow = 1000 })
	scriptUntilCompaction(h, fakemodel.Status(400))
	res, rec := h.mustRun("s", "build the server")
	if res.Text != "finished" {
		t.Errorf("run text = %q", res.Text)
	}
	reqs := h.srv.Requests()
	before, after := reqs[3].Messages, reqs[5].Messages
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("history changed by a failed compaction (-want +got):\n%s", diff)
	}
	failed := rec.of(EventCompactFailed)
	if len(failed) != 1 || failed[0].Err == nil || failed[0].Text == "" {
		t.Errorf("compact-failed events = %+v", failed)
	}
}

// checkPairs fails when a tool result is not preceded by the assistant
// message that made its call.
func checkPairs(t *testing.T, msgs []goopenai.ChatCompletionMessage) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case goopenai.ChatMessageRoleAssistant:
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case goopenai.ChatMessageRoleTool:
			if !open[m.ToolCallID] {
				t.Errorf("message %d: tool result %s has no call before it", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
}

func TestSplitPoint(t *testing.T) {
	t.Parallel()
	msg := func(role string) Message { return Message{Role: role} }
	u, a, tl := msg("user"), msg("assistant"), msg("tool")
	tests := []struct {
		name string
		msgs []Message
		keep int
		want int
	}{
		{"short history", []Message{u, a}, 8, 0},
		{"lands on assistant", []Message{u, a, tl, a, tl, a}, 3, 3},
		{"lands on tool", []Message{u, a, tl, tl, tl, a}, 3, 1},
		{"only tools back to start", []Message{a, tl, tl}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitPoint(tt.msgs, tt.keep); got != tt.want {
				t.Errorf("splitPoint = %d, want %d", got, tt.want)
			}
		})
	}
}

// The prompt about to be sent is the last one the endpoint counted plus
// what came since: one large tool output takes it over the threshold and
// compaction runs before the request, not after a refusal. Before, only
// the last counted prompt (here 40% of the window) was looked at.
func TestCompactionCountsWhatCameSinceTheLastPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ContextWindow = 1000 })
	h.srv.Enqueue(
		fakemodel.ToolCall("bash", `{"command":"echo one"}`).WithUsage(100, 10),
		fakemodel.ToolCall("bash", `{"command":"echo two"}`).WithUsage(200, 10),
		fakemodel.ToolCall("bash", `{"command":"echo three"}`).WithUsage(300, 10),
		fakemodel.ToolCall("bash", `{"command":"echo four"}`).WithUsage(350, 10),
		fakemodel.ToolCall("bash", `{"command":"head -c 1500 /dev/zero | tr '\\0' a"}`).WithUsage(400, 10),
		fakemodel.Text(testSummary),
		fakemodel.Text("finished"),
	)
	_, rec := h.mustRun("s", "build the server")
	if got := rec.of(EventCompacted); len(got) != 1 {
		t.Fatalf("compacted events = %d, want 1", len(got))
	}
	if reqs := h.srv.Requests(); reqs[5].Messages[0].Content != summarySystemPrompt {
		t.Errorf("request 6 is not the summariser: %.60q", reqs[5].Messages[0].Content)
	}
}

// A summariser that answers with a tool call (none was offered) wrote no
// summary: compaction fails and the history stays whole.
func TestSummaryOfOnlyToolCallsIsNoSummary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.ContextWindow = 1000 })
	scriptUntilCompaction(h, fakemodel.ToolCall("bash", `{"command":"ls"}`))
	_, rec := h.mustRun("s", "build the server")
	if len(rec.of(EventCompacted)) != 0 || len(rec.of(EventCompactFailed)) != 1 {
		t.Errorf("events %v, want a failed compaction", rec.kinds())
	}
	if got := h.lastRequest().Messages[1].Content; got != "build the server" {
		t.Errorf("history starts with %q, want the untouched prompt", got)
	}
}

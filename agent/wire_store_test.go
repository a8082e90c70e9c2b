package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	"github.com/h9-app/h9/agent/openai"
	"github.com/h9-app/h9/agent/store"
	goopenai "github.com/sashabaranov/go-openai"
)

// The same through the store: a session whose messages are go-openai's
// JSON (what a schema 1 file holds once migrated) runs on, its history is
// sent as endpoints accept it, and its stored bytes are left as they were.
func TestStoredGoOpenAIHistoryRunsOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	old := []goopenai.ChatCompletionMessage{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", ToolCalls: []goopenai.ToolCall{{ID: "call_1", Type: "function", Function: goopenai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "a.txt"},
		{Role: "assistant"}, // the empty answer older versions stored
		{Role: "user", Content: "and now?"},
	}
	raw := make([]json.RawMessage, len(old))
	for i, m := range old {
		var err error
		if raw[i], err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := h.store.AppendStep(ctx, "s", store.Step{Messages: raw}); err != nil {
		t.Fatal(err)
	}
	h.srv.Enqueue(fakemodel.Text("here"))
	if res, _ := h.mustRun("s", "hello?"); res.Text != "here" {
		t.Errorf("text = %q", res.Text)
	}
	sent := h.lastRequest().Messages[1:]
	if len(sent) != 4 || sent[1].ToolCalls[0].ID != "call_1" || sent[3].Content != "and now?\n\nhello?" {
		t.Errorf("sent history = %+v", sent)
	}
	sess, err := h.store.LoadSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Messages) != len(old)+2 {
		t.Fatalf("stored %d messages, want %d", len(sess.Messages), len(old)+2)
	}
	for i := range raw {
		if !bytes.Equal(sess.Messages[i], raw[i]) {
			t.Errorf("stored message %d = %s, want it unchanged: %s", i, sess.Messages[i], raw[i])
		}
	}
}

// A call the client answers as not run reads as the agent's own
// not-run result.
func TestNotRunIsTheAgentsWords(t *testing.T) {
	t.Parallel()
	if got := fail(errNotRun).Output; got != openai.NotRun {
		t.Errorf("agent answers a call not run %q, the client %q", got, openai.NotRun)
	}
}

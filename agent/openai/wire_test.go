package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	goopenai "github.com/sashabaranov/go-openai"
)

// A history stored by the previous version (go-openai's JSON, including
// the empty assistant message it could store) reads as Messages and is
// sent in a form endpoints accept.
func TestStoredGoOpenAIHistoryReadsAndSends(t *testing.T) {
	old := []goopenai.ChatCompletionMessage{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", ReasoningContent: "ls will do", ToolCalls: []goopenai.ToolCall{{ID: "call_1", Type: "function", Function: goopenai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "a.txt"},
		{Role: "assistant", ReasoningContent: "done thinking"}, // the empty answer older versions stored
		{Role: "user", Content: "and now?"},
		{Role: "user", Content: "hello?"}, // a failed run's prompt, then the next
	}
	var msgs []Message
	for _, m := range old {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var got Message
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, got)
	}
	want := []Message{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", Reasoning: "ls will do", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}}}},
		{Role: "tool", ToolCallID: "call_1", Content: "a.txt"},
		{Role: "user", Content: "and now?\n\nhello?"},
	}
	if diff := cmp.Diff(want, wireMessages(msgs)); diff != "" {
		t.Errorf("sent history (-want +got):\n%s", diff)
	}
}

func TestWireMessagesLeavesAValidHistoryAlone(t *testing.T) {
	msgs := []Message{
		{Role: RoleSystem, Content: "sys"}, userMessage("hi"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a"}, {ID: "b"}}},
		toolMessage("a", "1"), toolMessage("b", "2"),
		{Role: RoleAssistant, Content: "done"},
	}
	got := wireMessages(msgs)
	if &got[0] != &msgs[0] {
		t.Error("a valid history was copied")
	}
}

func TestWireMessagesAnswersUnansweredCalls(t *testing.T) {
	msgs := []Message{userMessage("hi"), {Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a"}, {ID: "b"}}}, toolMessage("a", "1"), userMessage("next")}
	got := wireMessages(msgs)
	if len(got) != 5 || got[3].ToolCallID != "b" || got[3].Content != NotRun || got[4].Content != "next" {
		t.Errorf("got %+v", got)
	}
}

// A failed run's prompt that the next run repeats (Retry re-sends the
// failed request) goes once; a different one is joined to it.
func TestWireMessagesSendsARepeatedPromptOnce(t *testing.T) {
	msgs := []Message{
		userMessage("the task"), {Role: RoleAssistant}, userMessage("the task"), // an old empty answer between
		userMessage("more"), userMessage("more"),
	}
	want := []Message{userMessage("the task\n\nmore")}
	if diff := cmp.Diff(want, wireMessages(msgs)); diff != "" {
		t.Errorf("sent history (-want +got):\n%s", diff)
	}
}

// Content is left out only beside tool calls; everywhere else it is sent,
// even empty, since endpoints refuse a null.
func TestMessageJSON(t *testing.T) {
	tests := []struct {
		msg  Message
		want string
	}{
		{Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Type: "function", Function: FunctionCall{Name: "bash", Arguments: "{}"}}}},
			`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"bash","arguments":"{}"}}]}`},
		{Message{Role: "tool", ToolCallID: "c"}, `{"role":"tool","content":"","tool_call_id":"c"}`},
		{Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Type: "function", ExtraContent: json.RawMessage(`{"google":{"thought_signature":"x"}}`)}}},
			`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"","arguments":""},"extra_content":{"google":{"thought_signature":"x"}}}]}`},
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.msg)
		if err != nil || string(data) != tt.want {
			t.Errorf("Marshal = %s, %v\nwant %s", data, err, tt.want)
		}
	}
}

func TestRejectedField(t *testing.T) {
	tests := []struct {
		msg   string
		field optionalField
		found bool
	}{
		{`{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted"}]}`, fieldStreamOptions, true},
		{`{"detail":[{"type":"extra_forbidden","loc":["body","user"],"msg":"Extra inputs are not permitted"}]}`, fieldUser, true},
		{"Unrecognized request argument supplied: stream_options", fieldStreamOptions, true},
		{"Unrecognized request argument supplied: user", fieldUser, true},
		{`{"detail":[{"type":"extra_forbidden","loc":["body","messages",2,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted"}]}`, fieldReasoning, true},
		{`{"detail":[{"type":"extra_forbidden","loc":["body","messages",0,"user","name"],"msg":"Extra inputs are not permitted"}]}`, 0, false},
		{"Invalid value for 'content': expected a string, got null.", 0, false},
		{"the user message is too long", 0, false},
	}
	for _, tt := range tests {
		f, found := rejectedField(tt.msg)
		if f != tt.field || found != tt.found {
			t.Errorf("rejectedField(%q) = %v, %v; want %v, %v", tt.msg, f, found, tt.field, tt.found)
		}
	}
}

func TestUniqueCallIDs(t *testing.T) {
	calls := []ToolCall{{ID: "x"}, {ID: "x"}, {}, {ID: "h90007000"}}
	uniqueCallIDs(calls, 7)
	seen := map[string]bool{}
	for _, c := range calls {
		if seen[c.ID] || c.ID == "" || c.Type != "function" {
			t.Errorf("ids %+v", calls)
		}
		seen[c.ID] = true
	}
	if calls[0].ID != "x" || len(calls[1].ID) != 9 {
		t.Errorf("ids %+v: the first keeps its id, a made-up one is nine characters", calls)
	}
}

// The request h9 writes is json.Marshal's, byte for byte, whatever it holds.
func TestWireEncodeIsJSONMarshal(t *testing.T) {
	call := ToolCall{ID: "c1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"cmd":"a < b && c > d"}`},
		ExtraContent: json.RawMessage(`{ "google": { "thought_signature": "x" } }`)}
	msgs := []Message{
		{Role: RoleSystem, Content: "you are <h9> & friends \u2028"},
		userMessage("héllo \"quoted\"\n"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{call}, Reasoning: "think"},
		toolMessage("c1", "out\x00put"),
		{Role: RoleAssistant, Content: "done"},
		{Role: RoleUser, Content: "see <this>", Images: []string{"data:image/png;base64,iVBORw0KGgo=", "data:image/gif;base64,R0lG"}},
	}
	fresh := []Tool{probeTool()}
	shared := sharedDefs(3)
	plan := sharedDefs(1)
	for name, w := range map[string]wireRequest{
		"plain":          {Model: "m", Messages: msgs},
		"no messages":    {Model: "m"},
		"empty messages": {Model: "m", Messages: []Message{}},
		"shared tools":   {Model: "m", Messages: msgs, Tools: shared, Stream: true},
		"plan tools":     {Model: "m", Messages: msgs, Tools: plan},
		"a part of them": {Model: "m", Messages: msgs, Tools: shared[:1]},
		"other tools":    {Model: "m", Messages: msgs, Tools: fresh},
		"options": {Model: "m<1>", Messages: msgs, Stream: true,
			StreamOptions: &streamOptions{IncludeUsage: true}, User: "T1/C1/1700000000.000100"},
	} {
		want, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.encode()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: encode =\n%s, %v\nwant\n%s", name, got, err, want)
		}
	}
	bad := wireRequest{Model: "m", Messages: []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ExtraContent: json.RawMessage(`{`)}}}}}
	if _, err := bad.encode(); err == nil {
		t.Error("a message that does not encode: no error")
	}
}

// sharedDefs are n tool definitions encoded once, as agent's are
// (KeepEncoded), with text json.Marshal escapes.
func sharedDefs(n int) []Tool {
	defs := make([]Tool, n)
	for i := range defs {
		defs[i] = Tool{Name: fmt.Sprintf("tool_%d", i), Description: "runs <cmd> && reports \u2028 \"it\"",
			Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)}
	}
	KeepEncoded(defs)
	return defs
}

// A Tool is sent as go-openai sent its own type before: the wire did not
// change when the agent stopped speaking go-openai's types.
func TestToolJSONIsGoOpenAIs(t *testing.T) {
	t.Parallel()
	params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	ours, err := json.Marshal(Tool{Name: "read_file", Description: "Reads <a> file", Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := json.Marshal(goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
		Name: "read_file", Description: "Reads <a> file", Parameters: params}})
	if err != nil || !bytes.Equal(ours, theirs) {
		t.Errorf("Tool JSON\n%s\nwant go-openai's\n%s (%v)", ours, theirs, err)
	}
}

// encode writes wireRequest's fields by name: a new field must be added
// there (and to the test above) or it would never reach the endpoint.
func TestWireEncodeKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[wireRequest]().NumField(); n != 6 {
		t.Fatalf("wireRequest has %d fields; encode writes 6: write the new one in encode", n)
	}
}

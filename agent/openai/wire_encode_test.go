package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"
)

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
	fresh := []goopenai.Tool{probeTool()}
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
			StreamOptions: &goopenai.StreamOptions{IncludeUsage: true}, User: "T1/C1/1700000000.000100"},
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
func sharedDefs(n int) []goopenai.Tool {
	defs := make([]goopenai.Tool, n)
	for i := range defs {
		defs[i] = goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: fmt.Sprintf("tool_%d", i), Description: "runs <cmd> && reports \u2028 \"it\"",
			Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`),
		}}
	}
	KeepEncoded(defs)
	return defs
}

// encode writes wireRequest's fields by name: a new field must be added
// there (and to the test above) or it would never reach the endpoint.
func TestWireEncodeKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[wireRequest]().NumField(); n != 6 {
		t.Fatalf("wireRequest has %d fields; encode writes 6: write the new one in encode", n)
	}
}

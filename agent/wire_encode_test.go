package agent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/h9-app/h9/planning"
)

// The request h9 writes is json.Marshal's, byte for byte, whatever it holds.
func TestWireEncodeIsJSONMarshal(t *testing.T) {
	call := ToolCall{ID: "c1", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"cmd":"a < b && c > d"}`},
		ExtraContent: json.RawMessage(`{ "google": { "thought_signature": "x" } }`)}
	msgs := []Message{
		systemMessage("you are <h9> & friends \u2028"),
		userMessage("héllo \"quoted\"\n"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{call}, Reasoning: "think"},
		toolMessage("c1", "out\x00put"),
		{Role: RoleAssistant, Content: "done"},
		{Role: RoleUser, Content: "see <this>", Images: []string{"data:image/png;base64,iVBORw0KGgo=", "data:image/gif;base64,R0lG"}},
	}
	fresh := []openai.Tool{probeTool()}
	for name, w := range map[string]wireRequest{
		"plain":          {Model: "m", Messages: msgs},
		"no messages":    {Model: "m"},
		"empty messages": {Model: "m", Messages: []Message{}},
		"shared tools":   {Model: "m", Messages: msgs, Tools: toolDefs(planning.PlanModeAutoEdit), Stream: true},
		"plan tools":     {Model: "m", Messages: msgs, Tools: toolDefs(planning.PlanModePlan)},
		"a part of them": {Model: "m", Messages: msgs, Tools: toolDefs(planning.PlanModeAutoEdit)[:1]},
		"other tools":    {Model: "m", Messages: msgs, Tools: fresh},
		"options": {Model: "m<1>", Messages: msgs, Stream: true,
			StreamOptions: &openai.StreamOptions{IncludeUsage: true}, User: "T1/C1/1700000000.000100"},
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

// encode writes wireRequest's fields by name: a new field must be added
// there (and to the test above) or it would never reach the endpoint.
func TestWireEncodeKnowsEveryField(t *testing.T) {
	if n := reflect.TypeFor[wireRequest]().NumField(); n != 6 {
		t.Fatalf("wireRequest has %d fields; encode writes 6: write the new one in encode", n)
	}
}

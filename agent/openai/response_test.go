package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Streams as endpoints send them, assembled into one answer.
func TestReadStream(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   Answer
	}{
		{"comments, CRLF, usage chunk, [DONE]",
			": OPENROUTER PROCESSING\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}` + "\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}` + "\n\n" +
				"data: [DONE]\n\n",
			Answer{Message: Message{Role: RoleAssistant, Content: "Hello"}, FinishReason: "stop", Usage: Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}},
		{"tool calls by index, interleaved, with extra_content",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""},"extra_content":{"google":{"thought_signature":"sig"}}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"x\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			Answer{Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
				{ID: "a", Type: "function", Function: FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}, ExtraContent: []byte(`{"google":{"thought_signature":"sig"}}`)},
				{ID: "b", Type: "function", Function: FunctionCall{Name: "read_file", Arguments: `{"path":"x"}`}},
			}}, FinishReason: "tool_calls"}},
		{"whole calls without index (Gemini, Ollama), one numbered 0 twice",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":{"k":1}}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"h","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n",
			Answer{Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
				{ID: "a", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}},
				{ID: "b", Type: "function", Function: FunctionCall{Name: "g", Arguments: `{"k":1}`}},
				{ID: "c", Type: "function", Function: FunctionCall{Name: "h", Arguments: "{}"}},
			}}, FinishReason: "tool_calls"}},
		{"Mistral's parts, multi-line data, no [DONE] after the finish",
			`data: {"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]}]}}]}` + "\n\n" +
				"data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"42\"}]},\"finish_reason\":\"stop\"}]}\n\n",
			Answer{Message: Message{Role: RoleAssistant, Content: "42"}, FinishReason: "stop"}},
		{"Groq's usage in x_groq",
			`data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}}` + "\n\ndata: [DONE]\n\n",
			Answer{Message: Message{Role: RoleAssistant, Content: "hi"}, FinishReason: "stop", Usage: Usage{PromptTokens: 7, CompletionTokens: 1, TotalTokens: 8}}},
		{"refusal and reasoning",
			`data: {"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]",
			Answer{Message: Message{Role: RoleAssistant, Reasoning: "think"}, Refusal: "I can't", FinishReason: "stop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readStream(strings.NewReader(tt.stream), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadStreamFailures(t *testing.T) {
	tests := []struct {
		name, stream string
		want         failure
	}{
		{"cut before the finish", `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n", failDropped},
		{"cut inside an event", `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n" + `data: {"choices":[{"ind`, failDropped},
		{"error event (vLLM)", `data: {"object":"error","message":"engine died","type":"InternalServerError","code":500}` + "\n\n", failServer},
		{"error event (LiteLLM)", `data: {"error":{"message":"rate limited upstream","code":429}}` + "\n\n", failRateLimit},
		{"not JSON", "data: {oops\n\n", failOther},
	}
	for _, tt := range tests {
		_, err := readStream(strings.NewReader(tt.stream), nil)
		if got := classify(err); got != tt.want {
			t.Errorf("%s: %v classified %d, want %d", tt.name, err, got, tt.want)
		}
	}
	var ee *EndpointError
	_, err := readStream(strings.NewReader(`data: {"object":"error","message":"engine died","code":500}`+"\n\n"), nil)
	if !errors.As(err, &ee) || ee.Message != "engine died" {
		t.Errorf("err = %v", err)
	}
}

// OpenRouter's provider failure in a stream is an empty answer with its
// error, like the same answer not streamed.
func TestStreamProviderErrorIsAnEmptyAnswer(t *testing.T) {
	ans, err := readStream(strings.NewReader(`data: {"error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`+"\n\ndata: [DONE]\n\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = checkAnswer(&ans, 1)
	var ea *emptyAnswerError
	if !errors.As(err, &ea) || ea.finish != "error" || ea.provider == nil || !strings.Contains(ea.reason(), "Provider disconnected") {
		t.Errorf("err = %v", err)
	}
}

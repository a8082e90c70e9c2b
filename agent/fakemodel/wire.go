package fakemodel

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// decodeRequest parses a chat request in one pass. go-openai's message
// type decodes each message up to three times (its UnmarshalJSON re-parses
// the bytes the outer decoder already scanned), and tool parameters would
// become maps. That cost is the fake's, in the benchmarks' process; a real
// endpoint parses elsewhere. Requests the fast path cannot take (a message
// whose content is an array of parts) fall back to go-openai's own types.
func decodeRequest(body []byte) (openai.ChatCompletionRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		var req openai.ChatCompletionRequest
		err := json.Unmarshal(body, &req)
		return req, err
	}
	req := w.ChatCompletionRequest
	req.Messages = make([]openai.ChatCompletionMessage, len(w.Messages))
	for i, m := range w.Messages {
		req.Messages[i] = openai.ChatCompletionMessage(m)
	}
	req.Tools = nil
	if w.Tools != nil {
		req.Tools = make([]openai.Tool, len(w.Tools))
		for i, t := range w.Tools {
			req.Tools[i] = openai.Tool{Type: t.Type}
			if f := t.Function; f != nil {
				def := openai.FunctionDefinition{Name: f.Name, Description: f.Description, Strict: f.Strict}
				if f.Parameters != nil {
					def.Parameters = f.Parameters
				}
				req.Tools[i].Function = &def
			}
		}
	}
	return req, nil
}

// wireRequest shadows the two slow fields of the embedded request.
type wireRequest struct {
	openai.ChatCompletionRequest
	Messages []wireMessage `json:"messages"`
	Tools    []wireTool    `json:"tools,omitempty"`
}

// wireMessage has openai.ChatCompletionMessage's fields, without its
// UnmarshalJSON; Content must be a string here.
type wireMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"content"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"-"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

type wireTool struct {
	Type     openai.ToolType `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function,omitempty"`
}

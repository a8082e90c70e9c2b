package fakemodel

import (
	"bytes"
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// request is a decoded chat request: go-openai's form for handlers and
// Requests, and what the checks need that go-openai drops (null content,
// extra_content, reasoning_content).
type request struct {
	openai.ChatCompletionRequest
	msgs []inMessage
}

// decodeRequest parses a chat request in one pass. go-openai's message
// type decodes each message up to three times (its UnmarshalJSON re-parses
// the bytes the outer decoder already scanned), and tool parameters would
// become maps. That cost is the fake's, in the benchmarks' process; a real
// endpoint parses elsewhere.
func decodeRequest(body []byte) (request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return request{}, err
	}
	req := request{ChatCompletionRequest: w.ChatCompletionRequest, msgs: w.Messages}
	req.Messages = make([]openai.ChatCompletionMessage, len(w.Messages))
	for i, m := range w.Messages {
		req.Messages[i] = m.openai()
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
	Messages []inMessage `json:"messages"`
	Tools    []wireTool  `json:"tools,omitempty"`
}

// inMessage is a request message as sent, content still raw.
type inMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []inCall        `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type inCall struct {
	ID           string              `json:"id"`
	Type         openai.ToolType     `json:"type"`
	Function     openai.FunctionCall `json:"function"`
	ExtraContent json.RawMessage     `json:"extra_content,omitempty"`
}

// nullContent: content missing or null, which endpoints accept only on an
// assistant message with tool calls.
func (m inMessage) nullContent() bool {
	c := bytes.TrimSpace(m.Content)
	return len(c) == 0 || string(c) == "null"
}

// text is the content as text: a string, or an array's text parts.
func (m inMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (m inMessage) openai() openai.ChatCompletionMessage {
	out := openai.ChatCompletionMessage{Role: m.Role, Content: m.text(), Name: m.Name, ToolCallID: m.ToolCallID}
	if m.ReasoningContent != nil {
		out.ReasoningContent = *m.ReasoningContent
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, openai.ToolCall{ID: c.ID, Type: c.Type, Function: c.Function})
	}
	return out
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

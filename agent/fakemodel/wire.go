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
// endpoint parses elsewhere. A request whose content is an array of parts
// takes a second, slower pass.
func decodeRequest(body []byte) (request, error) {
	var w wireRequest[*string]
	msgs, err := decodeWith(body, &w, func(c *string) (string, bool) {
		if c == nil {
			return "", true
		}
		return *c, false
	})
	if err != nil {
		var slow wireRequest[json.RawMessage]
		if msgs, err = decodeWith(body, &slow, rawText); err != nil {
			return request{}, err
		}
		for i, m := range slow.Messages {
			msgs[i].images = imageURLs(m.Content)
		}
		w.ChatCompletionRequest, w.Tools = slow.ChatCompletionRequest, slow.Tools
	}
	req := request{ChatCompletionRequest: w.ChatCompletionRequest, msgs: msgs}
	req.Messages = make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		req.Messages[i] = m.openai()
	}
	req.Tools = tools(w.Tools)
	return req, nil
}

// decodeWith decodes body into w and turns its messages into inMessages,
// reading each content with text (which also reports null).
func decodeWith[C any](body []byte, w *wireRequest[C], text func(C) (string, bool)) ([]inMessage, error) {
	if err := json.Unmarshal(body, w); err != nil {
		return nil, err
	}
	msgs := make([]inMessage, len(w.Messages))
	for i, m := range w.Messages {
		content, null := text(m.Content)
		msgs[i] = inMessage{Role: m.Role, content: content, null: null, Name: m.Name,
			ReasoningContent: m.ReasoningContent, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	}
	return msgs, nil
}

func tools(in []wireTool) []openai.Tool {
	if in == nil {
		return nil
	}
	out := make([]openai.Tool, len(in))
	for i, t := range in {
		out[i] = openai.Tool{Type: t.Type}
		if f := t.Function; f != nil {
			def := openai.FunctionDefinition{Name: f.Name, Description: f.Description, Strict: f.Strict}
			if f.Parameters != nil {
				def.Parameters = f.Parameters
			}
			out[i].Function = &def
		}
	}
	return out
}

// wireRequest shadows the two slow fields of the embedded request; C is
// how a message's content is decoded.
type wireRequest[C any] struct {
	openai.ChatCompletionRequest
	Messages []wireMessage[C] `json:"messages"`
	Tools    []wireTool       `json:"tools,omitempty"`
}

type wireMessage[C any] struct {
	Role             string   `json:"role"`
	Content          C        `json:"content"`
	Name             string   `json:"name,omitempty"`
	ReasoningContent *string  `json:"reasoning_content,omitempty"`
	ToolCalls        []inCall `json:"tool_calls,omitempty"`
	ToolCallID       string   `json:"tool_call_id,omitempty"`
}

// inMessage is a request message as sent.
type inMessage struct {
	Role             string
	content          string
	null             bool // content missing or null
	Name             string
	ReasoningContent *string
	ToolCalls        []inCall
	ToolCallID       string
	images           []string // the URLs of its image_url parts (images.go)
}

type inCall struct {
	ID           string              `json:"id"`
	Type         openai.ToolType     `json:"type"`
	Function     openai.FunctionCall `json:"function"`
	ExtraContent json.RawMessage     `json:"extra_content,omitempty"`
}

// nullContent: content missing or null, which endpoints accept only on an
// assistant message with tool calls.
func (m inMessage) nullContent() bool { return m.null }

// rawText is content as text: a string, or an array's text parts.
func rawText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), false
}

func (m inMessage) openai() openai.ChatCompletionMessage {
	out := openai.ChatCompletionMessage{Role: m.Role, Content: m.content, Name: m.Name, ToolCallID: m.ToolCallID,
		MultiContent: m.parts()}
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

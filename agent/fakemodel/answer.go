package fakemodel

import (
	"encoding/json"
	"fmt"
	"time"
)

// The answer's wire form: written by hand rather than with go-openai's
// types, which cannot send null content, content parts or extra_content.
type outResponse struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []outChoice `json:"choices"`
	Usage   *outUsage   `json:"usage,omitempty"`
	Error   *outError   `json:"error,omitempty"`
}

type outChoice struct {
	Index        int         `json:"index"`
	Message      *outMessage `json:"message,omitempty"`
	Delta        *outMessage `json:"delta,omitempty"`
	FinishReason *string     `json:"finish_reason"`
}

type outMessage struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	Refusal          string          `json:"refusal,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []outCall       `json:"tool_calls,omitempty"`
}

type outCall struct {
	Index        *int            `json:"index,omitempty"`
	ID           string          `json:"id,omitempty"`
	Type         string          `json:"type,omitempty"`
	Function     outFunction     `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

type outFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type outUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type outError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var jsonNull = json.RawMessage("null")

// rendered is a normal reply ready to send either way.
type rendered struct {
	calls  []outCall // with ids
	finish string
}

// render numbers the reply's tool calls and remembers what the server
// will expect back with them (signatures, reasoning).
func (s *Server) render(r Reply) rendered {
	out := rendered{finish: r.FinishReason}
	for _, c := range r.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", s.nextID())
		}
		oc := outCall{ID: id, Type: "function", Function: outFunction{Name: c.Name, Arguments: c.Args}}
		if c.Signature != "" {
			oc.ExtraContent, _ = json.Marshal(map[string]any{"google": map[string]string{"thought_signature": c.Signature}})
		}
		s.remember(id, c.Signature, r.Reasoning)
		out.calls = append(out.calls, oc)
	}
	if out.finish == "" {
		out.finish = "stop"
		if len(out.calls) > 0 {
			out.finish = "tool_calls"
		}
	}
	return out
}

// content is the reply's content field: null, a string, or Mistral's parts.
func (r Reply) content() json.RawMessage {
	var v any
	switch {
	case r.Thinking != "":
		v = []any{
			map[string]any{"type": "thinking", "thinking": []any{map[string]string{"type": "text", "text": r.Thinking}}},
			map[string]string{"type": "text", "text": r.Content},
		}
	case r.Content == "":
		return jsonNull
	default:
		v = r.Content
	}
	data, _ := json.Marshal(v)
	return data
}

// response builds the completion body for a normal reply.
func (s *Server) response(req request, reply Reply) outResponse {
	resp := s.envelope(req, "chat.completion")
	resp.Usage = s.usage(req, reply)
	if reply.EmptyChoices {
		resp.Choices = []outChoice{}
		return resp
	}
	rd := s.render(reply)
	msg := &outMessage{Role: "assistant", Content: reply.content(), Refusal: reply.Refusal, ReasoningContent: reply.Reasoning, ToolCalls: rd.calls}
	resp.Choices = []outChoice{{Message: msg, FinishReason: &rd.finish}}
	if reply.ProviderError != "" {
		resp.Error = &outError{Code: 502, Message: reply.ProviderError}
	}
	return resp
}

func (s *Server) envelope(req request, object string) outResponse {
	return outResponse{ID: "chatcmpl-fake", Object: object, Created: time.Now().Unix(), Model: req.Model}
}

// usage is the usage a reply reports, counted in Reported.
func (s *Server) usage(req request, reply Reply) *outUsage {
	prompt := reply.PromptTokens
	if prompt == 0 {
		prompt = estimateTokens(req)
	}
	completion := reply.CompletionTokens
	if completion == 0 {
		completion = 1 + len(reply.Content)/4
	}
	s.mu.Lock()
	s.reportedPrompt += prompt
	s.reportedCompletion += completion
	s.mu.Unlock()
	return &outUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// estimateTokens approximates prompt tokens as characters / 4.
func estimateTokens(req request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	return 1 + n/4
}

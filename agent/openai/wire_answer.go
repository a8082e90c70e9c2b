package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// wireResponse is a chat completion, or one chunk of a streamed one: the
// same shape, with message in the first and delta in the second. Only what
// h9 reads is declared; the rest is skipped.
type wireResponse struct {
	Object  string       `json:"object"` // "error": vLLM's and Mistral's error shape
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// XGroq carries Groq's usage in a stream's last chunk.
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	// Error is set by OpenRouter (and proxies) when the provider failed
	// after the 200: in the body, or in one event of a stream.
	Error json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireMessage     `json:"message"`
	Delta        wireMessage     `json:"delta"`
	FinishReason string          `json:"finish_reason"`
	Error        json.RawMessage `json:"error"`
}

type wireMessage struct {
	Content          wireContent    `json:"content"`
	Refusal          string         `json:"refusal"`
	ReasoningContent string         `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index        *int            `json:"index"`
	ID           string          `json:"id"`
	Function     wireFunction    `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

type wireFunction struct {
	Name      string        `json:"name"`
	Arguments wireArguments `json:"arguments"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// wireContent is message content as endpoints send it: a string, null, or
// an array of parts (Mistral: "thinking" parts, then "text" parts). Only
// the text parts are the answer; thinking is not kept.
type wireContent string

func (c *wireContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = ""
		return nil
	case b[0] == '"':
		s, err := jsonString(b)
		*c = wireContent(s)
		return err
	case b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return fmt.Errorf("content parts: %w", err)
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "output_text" {
				sb.WriteString(p.Text)
			}
		}
		*c = wireContent(sb.String())
		return nil
	}
	return fmt.Errorf("content is neither a string nor parts: %.40s", b)
}

// wireArguments are a call's arguments: a JSON string as the API defines,
// or, from some local servers, the JSON object itself.
type wireArguments string

func (a *wireArguments) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*a = ""
	case b[0] == '"':
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*a = wireArguments(s)
	default:
		*a = wireArguments(b)
	}
	return nil
}

// jsonString decodes a JSON string. Most streamed pieces have no escapes:
// those are taken as they are, without a second pass of the decoder.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// providerError reads an error object sent inside a 200 (OpenRouter's
// shape: {"code": 502, "message": "..."}); nil when there is none.
func providerError(raw json.RawMessage) *EndpointError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	e := &EndpointError{}
	e.fill(raw)
	if e.Message == "" {
		e.Message = string(raw)
	}
	return e
}

package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Model is the one call the agent makes to a chat-completions endpoint.
// *Client is the real one; tests may script their own.
type Model interface {
	Complete(ctx context.Context, req Request) (Answer, error)
}

// Request is one chat completion to ask the model for (not to be
// confused with agent.Request, what a caller asks a run to do).
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	User     string // the session id, for the endpoint's abuse monitoring
	// OnText, when set, hears the answer's text as the client reads it:
	// each piece of its content in order, as the stream brings it (a plain
	// answer: its whole text once it has arrived). It is called on the
	// caller's goroutine, in the middle of reading, so it must be quick;
	// the pieces are the answer's own strings, never changed afterwards.
	// Reasoning, refusals and tool calls are not text.
	OnText func(piece string)
	// OnRetract, when set, is called after a try whose text OnText heard
	// failed or was refused (WithRetries: a dropped stream, an idle
	// timeout, an empty answer): that text is void, and the next try's
	// pieces start the answer again.
	OnRetract func()
}

// Tool is a function the model may call, as a request offers it: the
// agent's own form of the wire's {"type":"function","function":{…}}.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON schema of type object
}

// MarshalJSON writes the tool as chat completions define it.
func (t Tool) MarshalJSON() ([]byte, error) {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	return json.Marshal(struct {
		Function function `json:"function"`
		Type     string   `json:"type"`
	}{function{t.Name, t.Description, t.Parameters}, toolTypeFunction})
}

// Answer is the endpoint's reply, streamed or not, in one form.
type Answer struct {
	Message      Message // role assistant; Content is the text parts only
	FinishReason string  // "stop", "tool_calls", "length", "content_filter", "error", …
	Refusal      string  // the model's refusal, when it sent one
	// Usage is what the endpoint reported; zero when it reported nothing
	// (the agent then estimates).
	Usage Usage
	// Discarded is what the endpoint reported for answers of this request
	// that were refused and asked again (empty ones): tokens spent all the same.
	Discarded Usage
	// ProviderError is an error object the endpoint sent with a 200
	// (OpenRouter, with finish_reason "error").
	ProviderError *EndpointError
}

// Roles of a conversation's messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation in the agent's own form: what
// it stores and, after wireMessages, what it sends. Its JSON is the
// chat-completions format, so a history stored as go-openai messages
// reads as it is. The agent owns this type because go-openai's drops the
// provider fields that must make the round trip (Gemini's extra_content).
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Reasoning is an assistant message's reasoning_content. It goes back
	// only with tool calls (DeepSeek's thinking mode requires it there, and
	// older reasoning endpoints reject it anywhere else).
	Reasoning string `json:"reasoning_content,omitempty"`
	// Images are data URLs sent with a user message's text as image parts
	// (agent/vision.go). They are never stored: the history keeps the text,
	// which names the files' paths.
	Images []string `json:"-"`
}

// ToolCall is one function call of an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
	// ExtraContent is kept verbatim and sent back: Gemini puts its thought
	// signature there and rejects the next request without it.
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

// FunctionCall names the tool and carries its JSON arguments as text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolTypeFunction is the only tool-call type there is.
const toolTypeFunction = "function"

// MarshalJSON writes content always, except on an assistant message whose
// tool calls stand without text: there it is left out, as endpoints expect
// (a null or missing content anywhere else is what they reject).
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message // without this method
	if len(m.Images) > 0 {
		return marshalWithImages(m)
	}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		return json.Marshal(struct {
			plain
			Content string `json:"content,omitempty"`
		}{plain: plain(m)})
	}
	return json.Marshal(plain(m))
}

func userMessage(content string) Message { return Message{Role: RoleUser, Content: content} }

func toolMessage(callID, output string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Content: output}
}

// imagePart and textPart are a user message's content parts.
type imageURLPart struct {
	URL string `json:"url"`
}

type contentPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *imageURLPart `json:"image_url,omitempty"`
}

// marshalWithImages writes a message whose content is parts: its text,
// then one image_url part per image.
func marshalWithImages(m Message) ([]byte, error) {
	type plain Message
	parts := make([]contentPart, 0, 1+len(m.Images))
	parts = append(parts, contentPart{Type: "text", Text: m.Content})
	for _, u := range m.Images {
		parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURLPart{URL: u}})
	}
	return json.Marshal(struct {
		plain
		Content []contentPart `json:"content"`
	}{plain: plain(m), Content: parts})
}

// Finish reasons of an Answer that the client and the agent act on.
const (
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
	finishError         = "error"
)

// emptyAnswerError: the endpoint answered with neither text nor tool
// calls nor a refusal. Storing it would make every later request of the
// session fail ("expected a string, got null"), so it is retried once and
// then reported, never stored.
type emptyAnswerError struct {
	finish   string
	provider *EndpointError // OpenRouter's error object with finish_reason "error"
}

func (e *emptyAnswerError) Error() string {
	s := "empty answer"
	if e.finish != "" {
		s += " (finish_reason " + e.finish + ")"
	}
	if e.provider != nil {
		s += ": " + e.provider.Error()
	}
	return s
}

func (e *emptyAnswerError) Unwrap() error { return ErrEmptyReply }

// reason explains the finish reason to a user, "" when it says nothing.
func (e *emptyAnswerError) reason() string {
	switch e.finish {
	case FinishLength:
		return " (finish_reason: length: it ran out of output tokens before answering; a reasoning model may spend them all thinking)"
	case FinishContentFilter:
		return " (finish_reason: content_filter: the endpoint's content filter withheld the answer)"
	case finishError:
		s := " (finish_reason: error: the provider failed while answering"
		if e.provider != nil && clean(e.provider.Message) != "" {
			s += ": " + clean(e.provider.Message)
		}
		return s + ")"
	case "", "stop":
		return ""
	}
	return " (finish_reason: " + clean(e.finish) + ")"
}

// checkAnswer makes an answer safe to store, or says why it is not:
// a refusal becomes the assistant's text, tool calls get unique ids (an
// endpoint leaving them empty or repeating one within the message would
// make their results ambiguous), and an empty answer is an error.
func checkAnswer(a *Answer, msgIndex int) error {
	m := &a.Message
	m.Role = RoleAssistant
	if m.Content == "" && len(m.ToolCalls) == 0 && a.Refusal != "" {
		m.Content = a.Refusal
	}
	if strings.TrimSpace(m.Content) == "" && len(m.ToolCalls) == 0 {
		return &emptyAnswerError{finish: a.FinishReason, provider: a.ProviderError}
	}
	uniqueCallIDs(m.ToolCalls, msgIndex)
	return nil
}

// uniqueCallIDs fills in missing ids and renames repeated ones. A made-up
// id is nine letters and digits (Mistral accepts no other form) built from
// the message's place in the conversation, so it is unique there too.
func uniqueCallIDs(calls []ToolCall, msgIndex int) {
	seen := make(map[string]bool, len(calls))
	n := 0
	for i := range calls {
		c := &calls[i]
		c.Type = toolTypeFunction
		for c.ID == "" || seen[c.ID] {
			c.ID = fmt.Sprintf("h9%04d%03d", msgIndex%10000, n%1000)
			n++
		}
		seen[c.ID] = true
	}
}

// Usage counts tokens: the endpoint's usage report, or h9's estimate for
// an answer that came without one.
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int
	// Estimated: some of these tokens are h9's estimate (bytes / 3), as
	// the endpoint reported no usage for them.
	Estimated bool `json:",omitempty"`
}

func (u *Usage) add(o Usage) { *u = u.Plus(o) }

// Plus is u and o together (a user's sessions, say).
func (u Usage) Plus(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		Estimated:        u.Estimated || o.Estimated,
	}
}

// Sentinel errors; agent's errors of the same names are these.
var (
	// ErrInvalidConfig: New was given a base URL it cannot use.
	ErrInvalidConfig = errors.New("invalid agent config")
	// ErrModel: the model endpoint failed after retries or answered
	// something unusable.
	ErrModel = errors.New("model request failed")
	// ErrEmptyReply: the endpoint answered with neither text nor tool
	// calls, twice; the answer was not stored.
	ErrEmptyReply = errors.New("model returned an empty answer")
)

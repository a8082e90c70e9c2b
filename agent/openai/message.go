package openai

import (
	"encoding/json"
)

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

package agent

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
	// (vision.go). They are never stored: the history keeps the text,
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

func systemMessage(content string) Message { return Message{Role: RoleSystem, Content: content} }

func toolMessage(callID, output string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Content: output}
}

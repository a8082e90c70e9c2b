package agent

import "github.com/h9-app/h9/agent/openai"

// The model client's types that the agent's own API speaks: Config.Model,
// the stored history, the usage in events. They are aliases, so a caller
// of agent alone needs no import of agent/openai.
type (
	Model        = openai.Model
	ModelRequest = openai.Request
	Answer       = openai.Answer
	Message      = openai.Message
	ToolCall     = openai.ToolCall
	FunctionCall = openai.FunctionCall
	Usage        = openai.Usage
)

// Roles of a conversation's messages.
const (
	RoleSystem    = openai.RoleSystem
	RoleUser      = openai.RoleUser
	RoleAssistant = openai.RoleAssistant
	RoleTool      = openai.RoleTool
)

// Finish reasons of an Answer the agent acts on.
const (
	finishLength        = openai.FinishLength
	finishContentFilter = openai.FinishContentFilter
)

func userMessage(content string) Message { return Message{Role: RoleUser, Content: content} }

func systemMessage(content string) Message { return Message{Role: RoleSystem, Content: content} }

func toolMessage(callID, output string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Content: output}
}

package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/h9-app/h9/agent/openai"
)

// sentArguments are a call's arguments as the model sent them, when they
// were not a JSON object; the zero value: they were.
type sentArguments struct {
	raw string
	cut bool // the answer stopped at the output limit
}

// storableArguments makes every call's arguments a JSON object and
// returns what the model sent where it changed them. Endpoints that parse
// the history (vLLM, Gemini, Mistral, llama.cpp's templates) reject a
// stored call whose arguments are empty, cut off at the output limit or
// plain text, and would then refuse every later request of the session.
// The call still runs with what the model sent, so its tool answers with
// the usual error.
func storableArguments(a *Answer) []sentArguments {
	var sent []sentArguments
	for i := range a.Message.ToolCalls {
		f := &a.Message.ToolCalls[i].Function
		args := strings.TrimSpace(f.Arguments)
		if args == "" {
			f.Arguments = "{}" // what the tools read it as anyway
			continue
		}
		if !strings.HasPrefix(args, "{") || !json.Valid([]byte(args)) {
			if sent == nil {
				sent = make([]sentArguments, len(a.Message.ToolCalls))
			}
			sent[i] = sentArguments{raw: f.Arguments, cut: a.FinishReason == finishLength}
			f.Arguments = "{}"
		}
	}
	return sent
}

// refused is the final text of an answer that is a refusal.
func refused(a *Answer) bool {
	return a.Refusal != "" && len(a.Message.ToolCalls) == 0 && a.Message.Content == a.Refusal
}

// cut reports whether a final answer was stopped before its end: at the
// output limit, or by a content filter.
func cut(a *Answer) bool {
	return (a.FinishReason == finishLength || a.FinishReason == finishContentFilter) && len(a.Message.ToolCalls) == 0
}

// cutError: the run's final answer was stopped before its end; it is
// stored, and is the run's Result.Text.
type cutError struct{ finish string }

func (e *cutError) Error() string {
	return fmt.Sprintf("%v (finish_reason %s)", ErrAnswerCut, e.finish)
}
func (e *cutError) Unwrap() error { return ErrAnswerCut }

// text is what the user reads.
func (e *cutError) text() string {
	why := "at its output limit (finish_reason: length)"
	if e.finish == finishContentFilter {
		why = "by the endpoint's content filter (finish_reason: content_filter)"
	}
	return "The model's answer was cut off " + why + ", so it is incomplete. Reply to let it continue."
}

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

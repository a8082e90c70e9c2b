package openai

import (
	"context"
	"encoding/json"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// The probe's one tool and the word it returns.
const (
	probeToolName = "get_magic_word"
	probeWord     = "pineapple"
	probePrompt   = "Call the tool " + probeToolName + ", then reply with the word it returns and nothing else."
)

// ToolProbe is what a tool-calling round trip found.
type ToolProbe struct {
	Called bool   // the model called the tool, and answered its result
	AsText bool   // it wrote the call as text: the server parses no tool calls
	Answer string // the model's last text
}

// ProbeTools makes one tiny tool-calling round trip, the way a run does:
// a request offering one tool, then, when the model calls it, the tool's
// result back (with whatever the endpoint must get back, such as Gemini's
// thought signatures) and the model's answer. A server without a
// tool-call parser fails here, with an error that DescribeError
// words with the fix, or by writing the call as text. There is no retry.
func ProbeTools(ctx context.Context, m Model, modelName string) (ToolProbe, error) {
	req := Request{Model: modelName, Tools: []goopenai.Tool{probeTool()}, Messages: []Message{userMessage(probePrompt)}}
	first, err := probeOnce(ctx, m, req)
	if err != nil {
		return ToolProbe{}, err
	}
	if len(first.ToolCalls) == 0 {
		return ToolProbe{AsText: writtenCall(first.Content), Answer: first.Content}, nil
	}
	req.Messages = append(req.Messages, first)
	for _, c := range first.ToolCalls {
		req.Messages = append(req.Messages, toolMessage(c.ID, probeWord))
	}
	second, err := probeOnce(ctx, m, req)
	if err != nil {
		return ToolProbe{}, err
	}
	return ToolProbe{Called: true, Answer: second.Content}, nil
}

func probeOnce(ctx context.Context, m Model, req Request) (Message, error) {
	ans, err := m.Complete(ctx, req)
	if err == nil {
		err = checkAnswer(&ans, len(req.Messages))
	}
	return ans.Message, err
}

func probeTool() goopenai.Tool {
	return goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
		Name:        probeToolName,
		Description: "Returns the magic word.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
	}}
}

// writtenCall reports whether text is a tool call written out, as models
// do when the server does not parse their calls: the tool's name, or the
// markers chat templates use for calls.
func writtenCall(text string) bool {
	return strings.Contains(text, probeToolName) ||
		containsAny(text, "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", `"arguments"`)
}

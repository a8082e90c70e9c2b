package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

const (
	// compactThresholdPercent of the context window, measured on the
	// prompt_tokens the endpoint reported for the last call, triggers compaction.
	compactThresholdPercent = 80
	// keepRecentMessages are kept verbatim after the summary (moved back so
	// that a tool result is never separated from its call).
	keepRecentMessages = 8
	// summaryMarker opens the summary message (the seed's marker).
	summaryMarker = "[Conversation Summary]"
	// activeTasksHeading introduces the injected todos.
	activeTasksHeading = "\n\n## Active Tasks\n"
	// transcriptMessageLimit and transcriptCharsPerToken bound what is sent
	// to the summariser.
	transcriptMessageLimit  = 2000
	transcriptCharsPerToken = 2
)

// TodoInjector supplies the active todos appended to a summary;
// *planning.TodoStore implements it.
type TodoInjector interface {
	FormatForInjection() string
}

// errNothingToCompact: the history is too short to summarise anything.
var errNothingToCompact = errors.New("nothing old enough to summarise")

const summarySystemPrompt = "You compress the history of a coding agent's session so it can continue with less context. " +
	"Write a concise summary in exactly this form:\n" +
	"**Goal:** what the user wants, with the essential constraints.\n" +
	"**Progress:** what has been done and found so far: files created or changed, commands run and their outcome, decisions.\n" +
	"**Next Steps:** what remains to be done, in order.\n" +
	"Keep file names, function names, commands and error messages exact. Do not invent anything."

// compactor replaces old messages with a model-written summary.
type compactor struct {
	model     Model
	modelName string
	user      string
	window    int // context window in tokens
}

// due reports whether the last prompt size calls for compaction.
func (c compactor) due(lastPromptTokens int) bool {
	return lastPromptTokens > 0 && lastPromptTokens >= c.window*compactThresholdPercent/100
}

// estimateCharsPerToken is the bytes-per-token guess used when an endpoint
// reports no usage; low (English is about 4), so compaction comes early
// rather than after the window is already exceeded.
const estimateCharsPerToken = 3

// estimatePromptTokens guesses a request's prompt size from its messages
// and tool definitions.
func estimatePromptTokens(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.Name) + len(m.ToolCallID) + 8
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		if t.Function != nil {
			n += len(t.Function.Name) + len(t.Function.Description)
			if b, err := json.Marshal(t.Function.Parameters); err == nil {
				n += len(b)
			}
		}
	}
	return n / estimateCharsPerToken
}

// compact returns the new history: the summary, then the recent messages
// unchanged. On error the caller keeps msgs as they were.
func (c compactor) compact(ctx context.Context, msgs []openai.ChatCompletionMessage, todos TodoInjector) ([]openai.ChatCompletionMessage, Usage, error) {
	cut := splitPoint(msgs, keepRecentMessages)
	if cut == 0 {
		return nil, Usage{}, errNothingToCompact
	}
	summary, used, err := c.summarise(ctx, msgs[:cut])
	if err != nil {
		return nil, used, err
	}
	content := summaryMarker + "\n" + summary
	if todos != nil {
		if active := todos.FormatForInjection(); active != "" {
			content += activeTasksHeading + active
		}
	}
	out := make([]openai.ChatCompletionMessage, 0, 1+len(msgs)-cut)
	out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: content})
	return append(out, msgs[cut:]...), used, nil
}

// splitPoint is the index of the first kept message: about keep messages
// from the end, moved back while it would start on a tool result, so an
// assistant's tool calls and their results stay together.
func splitPoint(msgs []openai.ChatCompletionMessage, keep int) int {
	cut := max(len(msgs)-keep, 0)
	for cut > 0 && msgs[cut].Role == openai.ChatMessageRoleTool {
		cut--
	}
	return cut
}

// summarise asks the model for the summary; the tokens it cost are
// returned so the run's usage includes them.
func (c compactor) summarise(ctx context.Context, old []openai.ChatCompletionMessage) (string, Usage, error) {
	req := openai.ChatCompletionRequest{
		Model: c.modelName,
		User:  c.user,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: summarySystemPrompt},
			{Role: openai.ChatMessageRoleUser, Content: transcript(old, c.window*transcriptCharsPerToken)},
		},
	}
	resp, err := c.model.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", Usage{}, err
	}
	used := usageOf(resp.Usage)
	text := strings.TrimSpace(resp.Choices[0].Message.Content)
	if text == "" {
		return "", used, ErrEmptyReply
	}
	return text, used, nil
}

// transcript renders messages as plain text for the summariser. Each
// message is capped; when the whole is still too long the middle goes,
// keeping the start (the goal) and the end (the latest state).
func transcript(msgs []openai.ChatCompletionMessage, limit int) string {
	parts := make([]string, len(msgs))
	total := 0
	for i, m := range msgs {
		parts[i] = renderMessage(m)
		total += len(parts[i])
	}
	dropped := 0
	for total > limit && len(parts) > 2 {
		mid := len(parts) / 2
		total -= len(parts[mid])
		parts = append(parts[:mid], parts[mid+1:]...)
		dropped++
	}
	if dropped > 0 {
		mid := len(parts) / 2
		note := fmt.Sprintf("[... %d messages omitted ...]", dropped)
		parts = append(parts[:mid], append([]string{note}, parts[mid:]...)...)
	}
	return "Summarise this conversation:\n\n" + strings.Join(parts, "\n\n")
}

func renderMessage(m openai.ChatCompletionMessage) string {
	var b strings.Builder
	b.WriteString(m.Role)
	b.WriteString(": ")
	b.WriteString(clip(m.Content, transcriptMessageLimit))
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(&b, "\n[called %s %s]", tc.Function.Name, clip(tc.Function.Arguments, transcriptMessageLimit/2))
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + " …"
}

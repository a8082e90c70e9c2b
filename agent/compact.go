package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

const (
	// compactThresholdPercent of the context window, measured on the
	// prompt_tokens the endpoint reported for the last call plus an estimate
	// of what was added since, triggers compaction.
	compactThresholdPercent = 80
	// keepRecentMessages are kept verbatim after the summary (moved back so
	// that a tool result is never separated from its call).
	keepRecentMessages = 8
	// summaryMarker opens the summary message (the Planning module's marker).
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

// due reports whether a prompt of this size calls for compaction.
func (c compactor) due(promptTokens int) bool {
	return promptTokens > 0 && promptTokens >= c.window*compactThresholdPercent/100
}

// compacted is a compaction's outcome: the new history, how many messages
// the summary replaced and how many tool outputs were shortened.
type compacted struct {
	msgs               []Message
	summarised, capped int
}

func (c compacted) note(why string) string {
	switch {
	case c.summarised > 0 && c.capped > 0:
		return fmt.Sprintf("Summarised %d older messages and shortened %d long tool outputs %s.", c.summarised, c.capped, why)
	case c.capped > 0:
		return fmt.Sprintf("Shortened %d long tool outputs %s.", c.capped, why)
	}
	return fmt.Sprintf("Summarised %d older messages %s.", c.summarised, why)
}

// compact returns the new history: the summary, then the recent messages
// unchanged, except that with toolCap > 0 their tool outputs are cut to
// that many bytes. On error the caller keeps msgs as they were.
func (c compactor) compact(ctx context.Context, msgs []Message, todos TodoInjector, toolCap int) (compacted, Usage, error) {
	cut := splitPoint(msgs, keepRecentMessages)
	kept, capped := capToolOutputs(msgs[cut:], toolCap)
	if cut == 0 {
		if capped == 0 {
			return compacted{}, Usage{}, errNothingToCompact
		}
		return compacted{msgs: kept, capped: capped}, Usage{}, nil
	}
	summary, used, err := c.summarise(ctx, msgs[:cut])
	if err != nil {
		return compacted{}, used, err
	}
	content := summaryMarker + "\n" + summary
	if todos != nil {
		if active := todos.FormatForInjection(); active != "" {
			content += activeTasksHeading + active
		}
	}
	out := make([]Message, 0, 1+len(kept))
	out = append(out, userMessage(content))
	return compacted{msgs: append(out, kept...), summarised: cut, capped: capped}, used, nil
}

// capToolOutputs returns msgs with every tool output longer than limit
// bytes cut to its head and tail (a copy when any is cut), and how many.
func capToolOutputs(msgs []Message, limit int) ([]Message, int) {
	if limit <= 0 {
		return msgs, 0
	}
	var out []Message
	n := 0
	for i, m := range msgs {
		if m.Role != RoleTool || len(m.Content) <= limit {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		out[i].Content = capText(m.Content, limit)
		n++
	}
	if out == nil {
		return msgs, 0
	}
	return out, n
}

// splitPoint is the index of the first kept message: about keep messages
// from the end, moved back while it would start on a tool result, so an
// assistant's tool calls and their results stay together.
func splitPoint(msgs []Message, keep int) int {
	cut := max(len(msgs)-keep, 0)
	for cut > 0 && msgs[cut].Role == RoleTool {
		cut--
	}
	return cut
}

// summarise asks the model for the summary; the tokens it cost are
// returned so the run's usage includes them.
func (c compactor) summarise(ctx context.Context, old []Message) (string, Usage, error) {
	req := ModelRequest{
		Model: c.modelName,
		User:  c.user,
		Messages: []Message{
			systemMessage(summarySystemPrompt),
			userMessage(transcript(old, c.window*transcriptCharsPerToken)),
		},
	}
	ans, err := c.model.Complete(ctx, req)
	if err != nil {
		return "", ans.Discarded, err
	}
	used := usageOrEstimate(ans.Usage, req, ans.Message).Plus(ans.Discarded)
	text := strings.TrimSpace(ans.Message.Content)
	if text == "" { // only tool calls, though none were offered: no summary
		return "", used, ErrEmptyReply
	}
	return text, used, nil
}

// transcript renders messages as plain text for the summariser. Each
// message is capped; when the whole is still too long the middle goes,
// keeping the start (the goal) and the end (the latest state).
func transcript(msgs []Message, limit int) string {
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

func renderMessage(m Message) string {
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

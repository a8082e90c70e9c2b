package agent

// estimateCharsPerToken is the bytes-per-token guess used when an endpoint
// reports no usage; low (English is about 4), so compaction comes early
// rather than after the window is already exceeded.
const estimateCharsPerToken = 3

// estimatePromptTokens guesses a request's prompt size from its messages
// and tool definitions.
func estimatePromptTokens(req ModelRequest) int {
	n := estimateMessageBytes(req.Messages)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n / estimateCharsPerToken
}

// estimateTokens guesses the size of some messages.
func estimateTokens(msgs []Message) int { return estimateMessageBytes(msgs) / estimateCharsPerToken }

func estimateMessageBytes(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + len(m.ToolCallID) + len(m.Reasoning) + 8
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments) + len(tc.ExtraContent)
		}
	}
	return n
}

// usageOrEstimate is the answer's usage, or an estimate of it when the
// endpoint reported none (some local servers and proxies never do; a
// stream whose endpoint ignored stream_options neither).
func usageOrEstimate(u Usage, req ModelRequest, reply Message) Usage {
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		u = Usage{
			PromptTokens:     estimatePromptTokens(req),
			CompletionTokens: max(1, estimateTokens([]Message{reply})),
			Estimated:        true,
		}
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

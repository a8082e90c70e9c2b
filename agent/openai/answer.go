package openai

import (
	"fmt"
	"strings"
)

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

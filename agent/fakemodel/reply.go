package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Reply is one scripted answer to a chat-completions request: either a
// normal assistant message (Content and/or Calls) or a fault.
type Reply struct {
	Content string // assistant text
	Calls   []Call // tool calls; IDs are generated when empty

	// Usage reported for this reply. Zero PromptTokens means "estimate from
	// the request size", so compaction is only triggered when a test asks.
	PromptTokens     int
	CompletionTokens int

	Latency time.Duration // wait before answering (the request context still applies)

	// Faults. Status ≥ 400 answers with an OpenAI-style error body.
	Status       int
	RetryAfter   string      // Retry-After header value sent with the fault ("1", or an HTTP date)
	Header       http.Header // extra response headers (e.g. "retry-after-ms")
	RawBody      string      // sent verbatim with status 200 (or Status), e.g. invalid JSON
	EmptyChoices bool        // 200 with "choices": []
}

// Call is one tool call in a scripted reply. Args is sent verbatim, so it
// may be broken JSON on purpose.
type Call struct {
	ID   string
	Name string
	Args string
}

// Text is a plain assistant answer with no tool calls (ends a run).
func Text(s string) Reply { return Reply{Content: s} }

// ToolCall is a reply calling one tool with argsJSON sent verbatim.
func ToolCall(name, argsJSON string) Reply {
	return Reply{Calls: []Call{{Name: name, Args: argsJSON}}}
}

// ToolCalls is a reply calling several tools in one message (parallel calls).
func ToolCalls(calls ...Call) Reply { return Reply{Calls: calls} }

// C builds a Call, for ToolCalls(C("read_file", `{"path":"a"}`), ...).
func C(name, argsJSON string) Call { return Call{Name: name, Args: argsJSON} }

// BrokenToolCall calls name with argument JSON that does not parse.
func BrokenToolCall(name string) Reply { return ToolCall(name, `{"path": "unterminated`) }

// RateLimited is a 429 carrying Retry-After in whole seconds (rounded up,
// as HTTP sends it) and OpenAI's finer "retry-after-ms".
func RateLimited(retryAfter time.Duration) Reply {
	secs := int((retryAfter + time.Second - 1) / time.Second)
	h := http.Header{}
	h.Set("retry-after-ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	return Reply{Status: 429, RetryAfter: strconv.Itoa(secs), Header: h}
}

// ServerError is an HTTP 500 with an OpenAI-style error body.
func ServerError() Reply { return Reply{Status: 500} }

// Status is an error reply with the given HTTP status.
func Status(code int) Reply { return Reply{Status: code} }

// InvalidJSON is a 200 whose body is not JSON.
func InvalidJSON() Reply { return Reply{RawBody: `{"id": "chatcmpl-broken", "choices": [`} }

// EmptyChoices is a 200 with no choices.
func EmptyChoices() Reply { return Reply{EmptyChoices: true} }

// WithUsage returns r reporting the given token counts.
func (r Reply) WithUsage(prompt, completion int) Reply {
	r.PromptTokens, r.CompletionTokens = prompt, completion
	return r
}

// WithLatency returns r answered after d.
func (r Reply) WithLatency(d time.Duration) Reply {
	r.Latency = d
	return r
}

// message renders a normal reply as the assistant message, numbering
// generated tool-call ids from seq.
func (r Reply) message(seq func() int) openai.ChatCompletionMessage {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.Content}
	for _, c := range r.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", seq())
		}
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       id,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Args},
		})
	}
	return msg
}

// TodoArgs is todo_write arguments for "id:status" pairs, each with the
// content "task <id>": TodoArgs("a:completed", "b:pending").
func TodoArgs(pairs ...string) string {
	type item struct {
		ID      string `json:"id"`
		Content string `json:"content"`
		Status  string `json:"status"`
	}
	items := make([]item, 0, len(pairs))
	for _, p := range pairs {
		id, status, _ := strings.Cut(p, ":")
		items = append(items, item{ID: id, Content: "task " + id, Status: status})
	}
	data, _ := json.Marshal(map[string]any{"todos": items})
	return string(data)
}

package fakemodel

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reply is one scripted answer to a chat-completions request: either a
// normal assistant message (Content and/or Calls) or a fault. A request
// with "stream": true gets the same reply as server-sent events.
type Reply struct {
	Content string // assistant text; empty is sent as "content": null
	Calls   []Call // tool calls; IDs are generated when empty

	// Thinking sends the content as Mistral's array of parts: a
	// "thinking" part with this text, then a "text" part with Content.
	Thinking string
	// Reasoning is sent as reasoning_content (DeepSeek). On a reply with
	// calls, the server then requires it back with them, as DeepSeek's
	// thinking mode does.
	Reasoning string
	// Refusal is sent as the message's refusal, with content null.
	Refusal string
	// FinishReason overrides "stop" / "tool_calls".
	FinishReason string
	// ProviderError is OpenRouter's error object inside a 200 (code 502
	// and this message), as a provider fails mid-answer; use it with
	// FinishReason "error".
	ProviderError string

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
	Drop         Drop        // close the connection instead of answering in full
	// CutAfter, when streaming, ends the stream abruptly after that many
	// events (the connection closes with no [DONE]).
	CutAfter int
	// ChunkGap, when streaming, is the pause before each event after the
	// first: a slow answer that keeps coming.
	ChunkGap time.Duration
}

// Drop is how a reply closes the connection early.
type Drop int

const (
	// DropBeforeResponse closes the connection without a response (EOF).
	DropBeforeResponse Drop = iota + 1
	// DropMidBody sends the headers and half of the body, then closes
	// (unexpected EOF), streamed or not.
	DropMidBody
)

// Call is one tool call in a scripted reply. Args is sent verbatim, so it
// may be broken JSON on purpose.
type Call struct {
	ID   string
	Name string
	Args string
	// Signature is sent as extra_content.google.thought_signature, as
	// Gemini does; the server then rejects any later request that carries
	// this call without it, as Gemini 3 does.
	Signature string
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

// MistralThinking is Mistral's reasoning answer: content as an array of
// a "thinking" part and a "text" part.
func MistralThinking(thinking, text string) Reply { return Reply{Thinking: thinking, Content: text} }

// EmptyAnswer is a 200 with content null, no tool calls and the given
// finish reason: Gemini's empty candidate ("stop"), a reasoning model out
// of output tokens ("length"), a content filter ("content_filter").
func EmptyAnswer(finishReason string) Reply { return Reply{FinishReason: finishReason} }

// OpenRouterError is OpenRouter's provider failure inside a 200: no
// content, finish_reason "error" and an error object.
func OpenRouterError(msg string) Reply { return Reply{FinishReason: "error", ProviderError: msg} }

// Refused is a refusal with content null.
func Refused(why string) Reply { return Reply{Refusal: why} }

// Cut is a final answer stopped at the output limit (finish_reason length).
func Cut(text string) Reply { return Reply{Content: text, FinishReason: "length"} }

// Dropped closes the connection before any response (the client reads EOF).
func Dropped() Reply { return Reply{Drop: DropBeforeResponse} }

// DroppedMidBody sends the headers and half the body, then closes.
func DroppedMidBody(r Reply) Reply {
	r.Drop = DropMidBody
	return r
}

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

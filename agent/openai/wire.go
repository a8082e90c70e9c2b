package openai

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// wireRequest is the chat-completions request body h9 sends.
type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Tools         []Tool         `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	User          string         `json:"user,omitempty"`
}

// streamOptions asks a stream for its usage, in a last chunk.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessages is the history as an endpoint accepts it. Stored messages
// are never changed; when something would be rejected, a copy is:
//   - consecutive user messages (a failed run's prompt, then the next one)
//     become one, since strict chat templates demand alternating roles; a
//     repeat of the one before (Retry re-sends a failed run's request) is
//     sent once;
//   - an assistant message with neither text nor tool calls (stored by
//     older versions) is left out;
//   - reasoning goes back only on messages with tool calls;
//   - a tool call without a result gets one ("not run"), so the history
//     stays valid.
func wireMessages(msgs []Message) []Message {
	if wireReady(msgs) {
		return msgs
	}
	out := make([]Message, 0, len(msgs))
	var open []ToolCall // the last assistant's calls not yet answered
	var lastUser string // the content of the last user message taken
	for _, m := range msgs {
		if m.Role != RoleTool {
			out = append(out, notRun(open)...)
			open = nil
		}
		switch {
		case m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0:
			continue
		case m.Role == RoleUser && len(out) > 0 && out[len(out)-1].Role == RoleUser:
			if m.Content != lastUser {
				out[len(out)-1].Content += "\n\n" + m.Content
				lastUser = m.Content
			}
			if len(m.Images) > 0 {
				out[len(out)-1].Images = append(slices.Clip(out[len(out)-1].Images), m.Images...)
			}
			continue
		case m.Role == RoleUser:
			lastUser = m.Content
		case m.Role == RoleTool:
			open = slices.DeleteFunc(open, func(c ToolCall) bool { return c.ID == m.ToolCallID })
		case len(m.ToolCalls) > 0:
			open = slices.Clone(m.ToolCalls)
		default:
			m.Reasoning = ""
		}
		out = append(out, m)
	}
	return append(out, notRun(open)...)
}

// wireReady reports whether msgs can be sent as they are, without a copy:
// the common case, checked without allocating.
func wireReady(msgs []Message) bool {
	for i, m := range msgs {
		switch {
		case m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0,
			m.Role == RoleUser && i > 0 && msgs[i-1].Role == RoleUser,
			m.Reasoning != "" && len(m.ToolCalls) == 0:
			return false
		case len(m.ToolCalls) > 0 && !allAnswered(m.ToolCalls, msgs[i+1:]):
			return false
		}
	}
	return true
}

// withoutReasoning is msgs without reasoning, for an endpoint that
// refuses it.
func withoutReasoning(msgs []Message) []Message {
	if !slices.ContainsFunc(msgs, func(m Message) bool { return m.Reasoning != "" }) {
		return msgs
	}
	out := slices.Clone(msgs)
	for i := range out {
		out[i].Reasoning = ""
	}
	return out
}

// NotRun is the result of a tool call the run never made (it was
// cancelled first): agent answers its own such calls with the same words.
const NotRun = "Error: not run: the run was cancelled"

// notRun answers calls as not run.
func notRun(calls []ToolCall) []Message {
	var out []Message
	for _, c := range calls {
		out = append(out, toolMessage(c.ID, NotRun))
	}
	return out
}

// allAnswered reports whether the tool messages right after calls answer
// each of them.
func allAnswered(calls []ToolCall, after []Message) bool {
	for _, c := range calls {
		found := false
		for _, m := range after {
			if m.Role != RoleTool {
				break
			}
			found = found || m.ToolCallID == c.ID
		}
		if !found {
			return false
		}
	}
	return true
}

// optionalField is a request field h9 can do without. An endpoint that
// rejects one by name (Mistral refuses stream_options, user and, behind
// LiteLLM, the reasoning_content LiteLLM itself sent; older Azure
// api-versions refuse stream_options) gets the request again without it,
// and never again for the life of the process.
type optionalField int

const (
	fieldStreamOptions optionalField = 1 << iota
	fieldUser
	fieldReasoning
)

// rejectionMarkers are how endpoints say "this field is not allowed".
var rejectionMarkers = []string{
	"extra_forbidden", "extra inputs are not permitted", "unrecognized request argument",
	"unknown field", "unknown parameter", "unrecognized field", "unsupported parameter", "not permitted",
}

// rejectedField is the optional field an error message refuses, if any.
func rejectedField(msg string) (optionalField, bool) {
	low := strings.ToLower(msg)
	marked := false
	for _, m := range rejectionMarkers {
		marked = marked || strings.Contains(low, m)
	}
	if !marked {
		return 0, false
	}
	low = quoteless.Replace(low)
	switch {
	case strings.Contains(low, "stream_options"):
		return fieldStreamOptions, true
	case strings.Contains(low, "reasoning_content"):
		return fieldReasoning, true
	case namesUser(low):
		return fieldUser, true
	}
	return 0, false
}

// quoteless drops the quoting that differs between endpoints' messages.
var quoteless = strings.NewReplacer(`"`, "", "'", "", "`", "", `\`, "")

// namesUser reports whether a quote-free message names the top-level
// "user" field (pydantic's body,user], "argument supplied: user"), not a
// user message such as body,messages,0,user,name].
func namesUser(msg string) bool {
	for _, form := range []string{"body,user]", "body.user", ": user", "parameter user", "field user"} {
		for i := 0; ; {
			j := strings.Index(msg[i:], form)
			if j < 0 {
				break
			}
			end := i + j + len(form)
			if end == len(msg) || !isWordByte(msg[end]) {
				return true
			}
			i = end
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// encodedDefs holds each KeepEncoded slice's JSON (agent's tools of a
// mode), by its first element: every step of every run sends one of
// those few slices, which never change, so they are encoded once.
var encodedDefs sync.Map // *Tool → []byte

// KeepEncoded encodes defs, a slice every step of a mode sends and no
// one changes, once, for every request that carries it (encodedDefs).
func KeepEncoded(defs []Tool) {
	if data, err := json.Marshal(defs); err == nil {
		encodedDefs.Store(&defs[0], data)
	}
}

// encode writes the request as json.Marshal would, byte for byte, with
// less work: the shared tool definitions come encoded (encodedDefs), and
// each message's own encoding goes in as it is, where json.Marshal would
// check and compact a Marshaler's output byte by byte again (a request
// carries the whole conversation, so that pass grew with every step).
func (w wireRequest) encode() ([]byte, error) {
	model, err := json.Marshal(w.Model)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 4096)
	b = append(append(append(b, `{"model":`...), model...), `,"messages":`...)
	if w.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range w.Messages {
			data, err := m.MarshalJSON()
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, data...)
		}
		b = append(b, ']')
	}
	if len(w.Tools) > 0 {
		tools, err := encodeTools(w.Tools)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"tools":`...), tools...)
	}
	return w.appendOptions(b)
}

// appendOptions writes the optional fields after the tools and closes the object.
func (w wireRequest) appendOptions(b []byte) ([]byte, error) {
	if w.Stream {
		b = append(b, `,"stream":true`...)
	}
	if w.StreamOptions != nil {
		opts, err := json.Marshal(w.StreamOptions)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"stream_options":`...), opts...)
	}
	if w.User != "" {
		user, err := json.Marshal(w.User)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"user":`...), user...)
	}
	return append(b, '}'), nil
}

// encodeTools is the JSON of tools: encodedDefs' when they are a
// KeepEncoded slice, else encoded now.
func encodeTools(tools []Tool) ([]byte, error) {
	if data, ok := encodedDefs.Load(&tools[0]); ok && len(tools) == cap(tools) {
		return data.([]byte), nil
	}
	return json.Marshal(tools)
}

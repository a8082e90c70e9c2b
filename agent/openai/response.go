package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// read decodes an answer: an error body, a stream, or one JSON completion
// (also when a stream was asked for and the endpoint ignored that).
// onText, if not nil, hears the answer's text as it is read (Request.OnText).
func (m *Client) read(resp *http.Response, r io.Reader, onText func(string)) (Answer, error) {
	if resp.StatusCode >= 300 {
		raw, err := io.ReadAll(r)
		if err != nil && len(raw) == 0 {
			return Answer{}, &droppedError{err: fmt.Errorf("reading the HTTP %d body: %w", resp.StatusCode, err)}
		}
		return Answer{}, decodeErrorBody(resp.StatusCode, raw, resp.Header)
	}
	br := bufio.NewReader(r)
	if isStream(resp.Header.Get("Content-Type"), br) {
		return readStream(br, onText)
	}
	raw, err := io.ReadAll(br)
	if err != nil {
		return Answer{}, &droppedError{err: fmt.Errorf("reading the answer: %w", err)}
	}
	ans, err := decodeCompletion(raw)
	if err == nil && ans.Message.Content != "" && onText != nil {
		onText(ans.Message.Content) // a whole answer's text is one piece
	}
	return ans, err
}

// isStream tells a stream from one JSON completion by the content type,
// or, when a proxy sends neither, by the first byte.
func isStream(contentType string, br *bufio.Reader) bool {
	switch ct := strings.ToLower(contentType); {
	case strings.HasPrefix(ct, "text/event-stream"):
		return true
	case strings.Contains(ct, "json"):
		return false
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil || i > 512 {
			return false
		}
		switch c := b[i-1]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		default:
			return c == ':' || c == 'd' || c == 'e' // a comment, data:, event:
		}
	}
}

// decodeCompletion reads a whole (not streamed) completion.
func decodeCompletion(raw []byte) (Answer, error) {
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return Answer{}, &droppedError{err: io.ErrUnexpectedEOF}
		}
		return Answer{}, fmt.Errorf("decoding the answer: %w", err)
	}
	if w.Object == "error" {
		return Answer{}, decodeErrorBody(0, raw, nil)
	}
	if len(w.Choices) == 0 {
		if pe := providerError(w.Error); pe != nil {
			return Answer{}, pe
		}
		return Answer{}, &emptyAnswerError{} // "choices": []
	}
	var a assembler
	a.addWhole(&w)
	return a.answer(), nil
}

// wireResponse is a chat completion, or one chunk of a streamed one: the
// same shape, with message in the first and delta in the second. Only what
// h9 reads is declared; the rest is skipped.
type wireResponse struct {
	Object  string       `json:"object"` // "error": vLLM's and Mistral's error shape
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// XGroq carries Groq's usage in a stream's last chunk.
	XGroq *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	// Error is set by OpenRouter (and proxies) when the provider failed
	// after the 200: in the body, or in one event of a stream.
	Error json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireMessage     `json:"message"`
	Delta        wireMessage     `json:"delta"`
	FinishReason string          `json:"finish_reason"`
	Error        json.RawMessage `json:"error"`
}

type wireMessage struct {
	Content          wireContent    `json:"content"`
	Refusal          string         `json:"refusal"`
	ReasoningContent string         `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Index        *int            `json:"index"`
	ID           string          `json:"id"`
	Function     wireFunction    `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

type wireFunction struct {
	Name      string        `json:"name"`
	Arguments wireArguments `json:"arguments"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// wireContent is message content as endpoints send it: a string, null, or
// an array of parts (Mistral: "thinking" parts, then "text" parts). Only
// the text parts are the answer; thinking is not kept.
type wireContent string

func (c *wireContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = ""
		return nil
	case b[0] == '"':
		s, err := jsonString(b)
		*c = wireContent(s)
		return err
	case b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return fmt.Errorf("content parts: %w", err)
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "output_text" {
				sb.WriteString(p.Text)
			}
		}
		*c = wireContent(sb.String())
		return nil
	}
	return fmt.Errorf("content is neither a string nor parts: %.40s", b)
}

// wireArguments are a call's arguments: a JSON string as the API defines,
// or, from some local servers, the JSON object itself.
type wireArguments string

func (a *wireArguments) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*a = ""
	case b[0] == '"':
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		*a = wireArguments(s)
	default:
		*a = wireArguments(b)
	}
	return nil
}

// jsonString decodes a JSON string. Most streamed pieces have no escapes:
// those are taken as they are, without a second pass of the decoder.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// providerError reads an error object sent inside a 200 (OpenRouter's
// shape: {"code": 502, "message": "..."}); nil when there is none.
func providerError(raw json.RawMessage) *EndpointError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	e := &EndpointError{}
	e.fill(raw)
	if e.Message == "" {
		e.Message = string(raw)
	}
	return e
}

// readStream reads a chat completion sent as server-sent events: comment
// lines (": OPENROUTER PROCESSING") are skipped, an event's data lines are
// joined, each event is one chunk, "[DONE]" ends the stream. A stream that
// ends before a finish reason or [DONE] was cut: a dropped connection.
// onText, if not nil, hears each piece of content as its chunk is decoded.
func readStream(r io.Reader, onText func(string)) (Answer, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	var (
		a    = assembler{onText: onText}
		data []byte
		line []byte
	)
	for {
		var err error
		line, err = readLine(br, line[:0])
		if err != nil && err != io.EOF {
			return Answer{}, &droppedError{err: err}
		}
		if ended, derr := a.line(line, &data); derr != nil || ended {
			return a.answer(), derr
		}
		if err == io.EOF {
			return a.end(&data)
		}
	}
}

// end finishes a stream at EOF: the last event may lack its blank line,
// but one that does not decode, or no finish reason at all, means the
// stream was cut.
func (a *assembler) end(data *[]byte) (Answer, error) {
	_, err := a.line(nil, data)
	var ee *EndpointError
	switch {
	case errors.As(err, &ee):
		return Answer{}, err
	case err != nil || a.finish == "":
		return Answer{}, &droppedError{err: fmt.Errorf("the stream ended before the answer did: %w", io.ErrUnexpectedEOF)}
	}
	return a.answer(), nil
}

// readLine reads one line without its line ending into buf.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			buf = bytes.TrimRight(buf, "\r\n")
			return buf, err
		}
	}
}

// line takes one SSE line; a blank one dispatches the event gathered in
// data. ended is true after [DONE].
func (a *assembler) line(line []byte, data *[]byte) (ended bool, err error) {
	if len(line) == 0 {
		if len(*data) == 0 {
			return false, nil
		}
		ended, err = a.event(*data)
		*data = (*data)[:0]
		return ended, err
	}
	if line[0] == ':' {
		return false, nil
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	if string(field) != "data" {
		return false, nil // event:, id:, retry: say nothing h9 needs
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	if len(*data) > 0 {
		*data = append(*data, '\n')
	}
	*data = append(*data, value...)
	return false, nil
}

// event decodes one chunk into the answer.
func (a *assembler) event(data []byte) (ended bool, err error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		if a.finish == "" {
			a.finish = "stop" // some servers send [DONE] without a finish reason
		}
		return true, nil
	}
	// The decoder fills the last chunk's choices again rather than new ones;
	// they are zeroed first, since it sets only the fields a chunk has.
	chunk := &a.scratch
	choices := chunk.Choices[:cap(chunk.Choices)]
	clear(choices)
	*chunk = wireResponse{Choices: choices[:0]}
	if err := json.Unmarshal(data, chunk); err != nil {
		return false, fmt.Errorf("decoding a streamed chunk: %w", err)
	}
	if chunk.Object == "error" {
		return false, decodeErrorBody(0, data, nil)
	}
	if pe := providerError(chunk.Error); pe != nil {
		if len(chunk.Choices) == 0 {
			return false, pe // a provider failing mid-stream (LiteLLM, vLLM)
		}
		a.provider = pe // OpenRouter's, with finish_reason "error"
	}
	a.addChunk(chunk)
	return false, nil
}

// assembler builds one Answer from a completion or from a stream's chunks.
// Tool calls arrive in pieces keyed by index; endpoints that send no index
// send each call whole, with its id.
type assembler struct {
	content, refusal, reasoning strings.Builder
	calls                       []ToolCall
	keys                        []int // the stream index of each call
	finish                      string
	usage                       *wireUsage
	provider                    *EndpointError
	scratch                     wireResponse // decoded into, chunk after chunk
	onText                      func(string) // hears a stream's content pieces
}

// addWhole takes a completion's first choice.
func (a *assembler) addWhole(w *wireResponse) {
	a.usage = w.Usage
	c := &w.Choices[0]
	a.addMessage(&c.Message, true)
	a.finishWith(c)
	if a.provider == nil {
		a.provider = providerError(w.Error)
	}
}

func (a *assembler) addChunk(w *wireResponse) {
	switch {
	case w.Usage != nil:
		a.usage = w.Usage
	case w.XGroq != nil && w.XGroq.Usage != nil:
		a.usage = w.XGroq.Usage
	}
	for i := range w.Choices {
		c := &w.Choices[i]
		if c.Index != 0 {
			continue // h9 asks for one choice
		}
		a.addMessage(&c.Delta, false)
		a.addMessage(&c.Message, true) // a proxy or two send whole messages in chunks
		a.finishWith(c)
	}
}

func (a *assembler) finishWith(c *wireChoice) {
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if pe := providerError(c.Error); pe != nil {
		a.provider = pe
	}
}

// addMessage takes a message or a delta; a whole message's calls are
// each a call of their own, a delta's are pieces to merge.
func (a *assembler) addMessage(m *wireMessage, whole bool) {
	a.content.WriteString(string(m.Content))
	if m.Content != "" && a.onText != nil {
		a.onText(string(m.Content))
	}
	a.refusal.WriteString(m.Refusal)
	a.reasoning.WriteString(m.ReasoningContent)
	for i := range m.ToolCalls {
		if whole {
			a.calls = append(a.calls, ToolCall{Type: toolTypeFunction})
			a.keys = append(a.keys, -1-i)
		}
		a.addCall(i, &m.ToolCalls[i], whole)
	}
}

// addCall merges one tool-call piece into the call it belongs to (into
// the last call, for a whole message's).
func (a *assembler) addCall(pos int, d *wireToolCall, whole bool) {
	i := -1
	switch {
	case whole:
		i = len(a.calls) - 1
	case d.Index != nil:
		i = indexOf(a.keys, *d.Index)
		pos = *d.Index
		if i >= 0 && d.ID != "" && a.calls[i].ID != "" && a.calls[i].ID != d.ID {
			i = -1 // a server that numbers every call 0 still gives each its own id
		}
	case d.ID != "":
		i = a.callWithID(d.ID)
		pos = len(a.calls) + 1000 // a key no indexed piece can have
	case len(a.calls) > 0:
		i = len(a.calls) - 1
	}
	if i < 0 {
		a.calls = append(a.calls, ToolCall{Type: toolTypeFunction})
		a.keys = append(a.keys, pos)
		i = len(a.calls) - 1
	}
	c := &a.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Function.Name == "" {
		c.Function.Name = d.Function.Name
	}
	c.Function.Arguments += string(d.Function.Arguments)
	if len(d.ExtraContent) > 0 && string(d.ExtraContent) != "null" {
		c.ExtraContent = append(json.RawMessage(nil), d.ExtraContent...)
	}
}

func (a *assembler) callWithID(id string) int {
	for i, c := range a.calls {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// indexOf is the last call with stream index k.
func indexOf(keys []int, k int) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i] == k {
			return i
		}
	}
	return -1
}

func (a *assembler) answer() Answer {
	ans := Answer{
		Message: Message{
			Role: RoleAssistant, Content: a.content.String(), ToolCalls: a.calls, Reasoning: a.reasoning.String(),
		},
		FinishReason:  a.finish,
		Refusal:       a.refusal.String(),
		ProviderError: a.provider,
	}
	if u := a.usage; u != nil {
		ans.Usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	return ans
}

package fakemodel

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// streamPiece is how many bytes of text or arguments one streamed chunk
// carries: a few tokens, as endpoints that batch tokens send (OpenAI sends
// about one token per chunk; the fake is cheaper to read so that the bot's
// benchmarks, whose models write long todo lists, measure the bot).
const streamPiece = 64

// stream answers with server-sent events as OpenAI frames them: text
// pieces (the first with the role), tool calls in pieces keyed by index
// (interleaved when there are several), the finish chunk, the usage chunk
// when stream_options.include_usage asks, [DONE]; each event is flushed on
// its own. A comment line (OpenRouter's keep-alive) comes first.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	events := s.streamEvents(req, reply)
	s.mu.Lock()
	buffered := s.buffered && reply.ChunkGap == 0
	s.mu.Unlock()
	cut := reply.CutAfter
	if reply.Drop == DropMidBody {
		cut = max(1, len(events)/2)
	}
	_, _ = w.Write([]byte(": OPENROUTER PROCESSING\n\n")) // sent with the first event
	for i, data := range events {
		if cut > 0 && i == cut {
			if flusher != nil {
				flusher.Flush()
			}
			panic(http.ErrAbortHandler) // the connection closes mid-stream
		}
		if i > 0 && !wait(r, reply.ChunkGap) {
			return
		}
		_, _ = w.Write(append(append([]byte("data: "), data...), '\n', '\n'))
		if flusher != nil && !buffered {
			flusher.Flush()
		}
	}
}

// streamEvents are the data payloads of the stream, [DONE] last.
func (s *Server) streamEvents(req request, reply Reply) [][]byte {
	var deltas []outMessage
	finish := "stop"
	if !reply.EmptyChoices {
		rd := s.render(reply)
		finish = rd.finish
		deltas = append(deltas, textDeltas(reply)...)
		deltas = append(deltas, callDeltas(rd.calls)...)
		if len(deltas) == 0 {
			deltas = []outMessage{{}}
		}
		deltas[0].Role = "assistant"
	}
	var out [][]byte
	chunk := func(c outResponse) { out = append(out, mustJSON(c)) }
	for i := range deltas {
		c := s.envelope(req, "chat.completion.chunk")
		c.Choices = []outChoice{{Delta: &deltas[i]}}
		chunk(c)
	}
	if !reply.EmptyChoices {
		c := s.envelope(req, "chat.completion.chunk")
		c.Choices = []outChoice{{Delta: &outMessage{}, FinishReason: &finish}}
		if reply.ProviderError != "" {
			c.Error = &outError{Code: 502, Message: reply.ProviderError}
		}
		chunk(c)
	}
	if o := req.StreamOptions; o != nil && o.IncludeUsage {
		c := s.envelope(req, "chat.completion.chunk")
		c.Choices, c.Usage = []outChoice{}, s.usage(req, reply)
		chunk(c)
	}
	return append(out, []byte("[DONE]"))
}

// textDeltas carry thinking (as Mistral's parts), reasoning, the refusal
// and the text in pieces.
func textDeltas(r Reply) []outMessage {
	var out []outMessage
	if r.Thinking != "" {
		thinking := Reply{Thinking: r.Thinking}.content()
		var parts []json.RawMessage
		_ = json.Unmarshal(thinking, &parts)
		out = append(out, outMessage{Content: mustJSON([]json.RawMessage{parts[0]})})
	}
	if r.Reasoning != "" {
		out = append(out, outMessage{ReasoningContent: r.Reasoning})
	}
	if r.Refusal != "" {
		out = append(out, outMessage{Refusal: r.Refusal})
	}
	for _, p := range pieces(r.Content) {
		content := mustJSON(p)
		if r.Thinking != "" {
			content = mustJSON([]map[string]string{{"type": "text", "text": p}})
		}
		out = append(out, outMessage{Content: content})
	}
	return out
}

// callDeltas stream each call as a head (index, id, name, extra_content)
// and argument pieces, interleaving the calls.
func callDeltas(calls []outCall) []outMessage {
	var out []outMessage
	argPieces := make([][]string, len(calls))
	for i, c := range calls {
		idx := i
		head := outCall{Index: &idx, ID: c.ID, Type: c.Type, Function: outFunction{Name: c.Function.Name}, ExtraContent: c.ExtraContent}
		out = append(out, outMessage{ToolCalls: []outCall{head}})
		argPieces[i] = pieces(c.Function.Arguments)
	}
	for more := true; more; {
		more = false
		for i := range calls {
			if len(argPieces[i]) == 0 {
				continue
			}
			idx := i
			out = append(out, outMessage{ToolCalls: []outCall{{Index: &idx, Function: outFunction{Arguments: argPieces[i][0]}}}})
			argPieces[i] = argPieces[i][1:]
			more = true
		}
	}
	return out
}

// pieces splits s into streamPiece-byte pieces on rune boundaries.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(streamPiece, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

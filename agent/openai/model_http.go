package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// maxAnswerBytes bounds what h9 reads of one answer or error body.
const maxAnswerBytes = 16 << 20

// Complete sends one chat completion, streamed when the model is set to.
// An optional field the endpoint refuses by name is dropped and the
// request sent again at once; that is not a retry.
func (m *Client) Complete(ctx context.Context, req Request) (Answer, error) {
	msgs := wireMessages(req.Messages)
	for {
		sent := m.fields(req)
		ans, err := m.send(ctx, m.body(req, msgs, sent))
		var ee *EndpointError
		if err == nil || !errors.As(err, &ee) || (ee.Status != http.StatusBadRequest && ee.Status != http.StatusUnprocessableEntity) {
			return ans, err
		}
		f, found := rejectedField(ee.Message)
		if !found || sent&f == 0 {
			return ans, err
		}
		m.dropped.Or(int32(f))
	}
}

// fields are the optional fields this request carries.
func (m *Client) fields(req Request) optionalField {
	var f optionalField
	if req.User != "" {
		f |= fieldUser
	}
	if m.stream {
		f |= fieldStreamOptions
	}
	if slices.ContainsFunc(req.Messages, func(m Message) bool { return m.Reasoning != "" }) {
		f |= fieldReasoning
	}
	return f &^ optionalField(m.dropped.Load())
}

func (m *Client) body(req Request, msgs []Message, fields optionalField) wireRequest {
	if optionalField(m.dropped.Load())&fieldReasoning != 0 {
		msgs = withoutReasoning(msgs)
	}
	w := wireRequest{Model: req.Model, Messages: msgs, Tools: req.Tools, Stream: m.stream}
	if fields&fieldUser != 0 {
		w.User = req.User
	}
	if fields&fieldStreamOptions != 0 {
		w.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	return w
}

// send makes one HTTP request under the idle timeout and the whole
// request's bound, and reads its answer.
func (m *Client) send(ctx context.Context, body wireRequest) (Answer, error) {
	data, err := body.encode()
	if err != nil {
		return Answer{}, fmt.Errorf("encoding the request: %w", err)
	}
	wctx, dog := watch(ctx, m.idle, m.whole)
	defer dog.stop()
	hreq, err := http.NewRequestWithContext(wctx, http.MethodPost, m.ep.chatURL, bytes.NewReader(data))
	if err != nil {
		return Answer{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	m.ep.authorize(hreq.Header, m.key)
	resp, err := m.client.Do(hreq)
	if err != nil {
		return Answer{}, dog.explain(ctx, m.scrub(err))
	}
	defer resp.Body.Close()
	r := io.LimitReader(dog.reader(resp.Body), maxAnswerBytes)
	ans, err := m.read(resp, r)
	if err != nil {
		return Answer{}, dog.explain(ctx, m.scrub(err))
	}
	return ans, nil
}

// read decodes an answer: an error body, a stream, or one JSON completion
// (also when a stream was asked for and the endpoint ignored that).
func (m *Client) read(resp *http.Response, r io.Reader) (Answer, error) {
	if resp.StatusCode >= 300 {
		raw, err := io.ReadAll(r)
		if err != nil && len(raw) == 0 {
			return Answer{}, &droppedError{err: fmt.Errorf("reading the HTTP %d body: %w", resp.StatusCode, err)}
		}
		return Answer{}, decodeErrorBody(resp.StatusCode, raw, resp.Header)
	}
	br := bufio.NewReader(r)
	if isStream(resp.Header.Get("Content-Type"), br) {
		return readStream(br)
	}
	raw, err := io.ReadAll(br)
	if err != nil {
		return Answer{}, &droppedError{err: fmt.Errorf("reading the answer: %w", err)}
	}
	return decodeCompletion(raw)
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

// scrub removes the key from what err says: the endpoint's own words in
// an EndpointError (some proxies repeat the key they were given), and any
// other error's text, keeping the chain for classification.
func (m *Client) scrub(err error) error {
	if err == nil || m.key == "" {
		return err
	}
	var ee *EndpointError
	if errors.As(err, &ee) {
		ee.Message = scrubKey(ee.Message, m.key)
	}
	var ea *emptyAnswerError
	if errors.As(err, &ea) && ea.provider != nil {
		ea.provider.Message = scrubKey(ea.provider.Message, m.key)
	}
	if strings.Contains(err.Error(), m.key) {
		return &scrubbedError{msg: scrubKey(err.Error(), m.key), err: err}
	}
	return err
}

func scrubKey(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[REDACTED]")
}

// scrubbedError is err with the key removed from its text.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

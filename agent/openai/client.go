package openai

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/workspace/netx"
)

// Config configures an OpenAI-compatible endpoint.
type Config struct {
	// BaseURL is e.g. "https://api.openai.com/v1", an Azure deployment URL
	// ("https://R.openai.azure.com/openai/deployments/D?api-version=V"), or
	// Azure's "https://R.openai.azure.com/openai/v1".
	BaseURL string
	APIKey  string // sent as a bearer token, or as api-key to Azure; may be empty
	// Stream asks for server-sent events, so a long answer keeps the
	// connection busy and the idle timeout applies between chunks.
	Stream bool
	// IdleTimeout bounds each wait for the endpoint: for the first byte of
	// the answer, then between two reads of its body. 0 = DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxRequest bounds one request from its start to the end of its
	// answer, however steadily it streams. 0 = DefaultMaxRequest.
	MaxRequest time.Duration
	HTTPClient *http.Client // nil = a client with many idle connections
}

// DefaultIdleTimeout is Config.IdleTimeout's default.
const DefaultIdleTimeout = 120 * time.Second

// Client talks to one OpenAI-compatible endpoint. Safe for
// concurrent use.
type Client struct {
	ep     endpoint
	key    string
	stream bool
	idle   time.Duration
	whole  time.Duration // MaxRequest
	client *http.Client
	// dropped holds the optional request fields the endpoint refused.
	dropped atomic.Int32
}

// New checks cfg and builds the model; a base URL it cannot
// use is an ErrInvalidConfig.
func New(cfg Config) (*Client, error) {
	ep, err := parseEndpoint(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: base URL %v", ErrInvalidConfig, err)
	}
	m := &Client{ep: ep, key: cfg.APIKey, stream: cfg.Stream, idle: cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout),
		whole: cmp.Or(cfg.MaxRequest, DefaultMaxRequest), client: cfg.HTTPClient}
	if m.client == nil {
		m.client = &http.Client{Transport: netx.Transport(modelIdleConns)}
	}
	return m, nil
}

// modelIdleConns is how many idle keep-alive connections to the endpoint
// are kept, so that concurrent sessions reuse theirs for each step.
const modelIdleConns = 256

// maxAnswerBytes bounds what h9 reads of one answer or error body.
const maxAnswerBytes = 16 << 20

// Complete sends one chat completion, streamed when the model is set to.
// An optional field the endpoint refuses by name is dropped and the
// request sent again at once; that is not a retry.
func (m *Client) Complete(ctx context.Context, req Request) (Answer, error) {
	msgs := wireMessages(req.Messages)
	for {
		sent := m.fields(req)
		ans, err := m.send(ctx, m.body(req, msgs, sent), req.OnText)
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
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return w
}

// send makes one HTTP request under the idle timeout and the whole
// request's bound, and reads its answer.
func (m *Client) send(ctx context.Context, body wireRequest, onText func(string)) (Answer, error) {
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
	ans, err := m.read(resp, r, onText)
	if err != nil {
		return Answer{}, dog.explain(ctx, m.scrub(err))
	}
	return ans, nil
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

// watchdog cancels a request once the endpoint has sent nothing for its
// idle time: before the first byte, or between two reads of the body. A
// streamed answer that keeps coming may take as long as it needs, which
// one timeout over the whole request could not allow.
//
// A request still receiving after its whole time (MaxRequest) is cut all
// the same: an endpoint trickling a byte now and then must not hold a run
// for ever (ARCHITECTURE.md, "Lifetimes and deadlines").
type watchdog struct {
	idle   time.Duration
	timer  *time.Timer
	whole  *time.Timer // the whole request's bound
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// DefaultMaxRequest bounds one model request from its start to the last
// byte of its answer (Config.MaxRequest's default). The longest honest
// answer (a full completion budget streamed by a slow local model at a few
// tokens a second) takes minutes; half an hour is far past it and still
// frees a stuck run.
const DefaultMaxRequest = 30 * time.Minute

func watch(ctx context.Context, idle, whole time.Duration) (context.Context, *watchdog) {
	wctx, cancel := context.WithCancelCause(ctx)
	d := &watchdog{idle: idle, ctx: wctx, cancel: cancel}
	d.timer = time.AfterFunc(idle, func() { cancel(&idleError{after: idle}) })
	d.whole = time.AfterFunc(whole, func() { cancel(&idleError{after: whole, whole: true}) })
	return wctx, d
}

func (d *watchdog) stop() {
	d.timer.Stop()
	d.whole.Stop()
	d.cancel(nil)
}

// reader resets the timer on every read that brings data.
func (d *watchdog) reader(r io.Reader) io.Reader { return &kickReader{r: r, d: d} }

type kickReader struct {
	r io.Reader
	d *watchdog
}

func (k *kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.d.timer.Reset(k.d.idle)
	}
	return n, err
}

// explain turns the cancellation the watchdog caused into its idleError;
// a cancellation of the caller's own context stays what it was.
func (d *watchdog) explain(parent context.Context, err error) error {
	if err == nil || parent.Err() != nil {
		return err
	}
	var ie *idleError
	if errors.As(context.Cause(d.ctx), &ie) {
		return ie
	}
	return err
}

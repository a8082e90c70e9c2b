package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/h9-app/h9/workspace/netx"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
)

// Model is the one call the agent makes to a chat-completions endpoint.
// *Client is the real one; tests may script their own.
type Model interface {
	Complete(ctx context.Context, req Request) (Answer, error)
}

// Request is one chat completion to ask the model for (not to be
// confused with agent.Request, what a caller asks a run to do).
type Request struct {
	Model    string
	Messages []Message
	Tools    []goopenai.Tool
	User     string // the session id, for the endpoint's abuse monitoring
}

// Answer is the endpoint's reply, streamed or not, in one form.
type Answer struct {
	Message      Message // role assistant; Content is the text parts only
	FinishReason string  // "stop", "tool_calls", "length", "content_filter", "error", …
	Refusal      string  // the model's refusal, when it sent one
	// Usage is what the endpoint reported; zero when it reported nothing
	// (the agent then estimates).
	Usage Usage
	// Discarded is what the endpoint reported for answers of this request
	// that were refused and asked again (empty ones): tokens spent all the same.
	Discarded Usage
	// ProviderError is an error object the endpoint sent with a 200
	// (OpenRouter, with finish_reason "error").
	ProviderError *EndpointError
}

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

// ListModels lists the endpoint's model ids through go-openai, configured
// for Azure when the endpoint is Azure.
func (m *Client) ListModels(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.idle) // a short list: one idle wait bounds it
	defer cancel()
	list, err := goopenai.NewClientWithConfig(m.ep.goOpenAIConfig(m.key, m.client)).ListModels(ctx)
	if err != nil {
		return nil, m.scrub(fromGoOpenAI(err))
	}
	ids := make([]string, len(list.Models))
	for i, md := range list.Models {
		ids[i] = md.ID
	}
	return ids, nil
}

// fromGoOpenAI turns go-openai's HTTP errors into an EndpointError, so
// that they are classified, worded and scrubbed like the agent's own.
func fromGoOpenAI(err error) error {
	var ae *goopenai.APIError
	var re *goopenai.RequestError
	switch {
	case errors.As(err, &ae):
		return &EndpointError{Status: ae.HTTPStatusCode, Code: strings.Trim(fmt.Sprint(cmp.Or[any](ae.Code, "")), `"`), Type: ae.Type, Message: ae.Message}
	case errors.As(err, &re):
		return decodeErrorBody(re.HTTPStatusCode, re.Body, nil)
	}
	return err
}

// modelIdleConns is how many idle keep-alive connections to the endpoint
// are kept, so that concurrent sessions reuse theirs for each step.
const modelIdleConns = 256

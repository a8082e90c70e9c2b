package agent

import (
	"context"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Model is the one call the agent makes to a chat-completions endpoint.
// *openai.Client satisfies it.
type Model interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// NewOpenAIModel builds a go-openai client for any OpenAI-compatible
// endpoint. baseURL is e.g. "https://api.openai.com/v1"; apiKey may be empty
// for local servers; httpClient nil means a default client (the engine
// applies its own per-request timeout through the context).
func NewOpenAIModel(baseURL, apiKey string, httpClient *http.Client) *openai.Client {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	if httpClient == nil {
		httpClient = &http.Client{Transport: modelTransport()}
	}
	cfg.HTTPClient = httpClient
	return openai.NewClientWithConfig(cfg)
}

// modelIdleConns is how many idle keep-alive connections to the endpoint
// are kept. Go's default of 2 per host makes every concurrent session past
// the second dial (and TLS-handshake) a new connection for each step.
const modelIdleConns = 256

func modelTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = modelIdleConns
	t.MaxIdleConnsPerHost = modelIdleConns
	return t
}

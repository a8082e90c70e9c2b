package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// endpoint is where chat completions go and how the key travels.
type endpoint struct {
	chatURL string
	// azure sends the key as the api-key header instead of a bearer token.
	azure bool
	// base, apiVersion and deployment locate the models list (modelsURL).
	base, apiVersion, deployment string
}

// azureHosts are the domains of Azure OpenAI and Azure AI Foundry resources.
var azureHosts = []string{".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"}

const (
	chatSuffix     = "/chat/completions"
	azureDeployDir = "/openai/deployments/"
)

// CheckBaseURL reports what is wrong with an OPENAI_BASE_URL, nil if it
// can be used.
func CheckBaseURL(base string) error {
	_, err := parseEndpoint(base)
	return err
}

// parseEndpoint reads a base URL: any OpenAI-compatible ".../v1" (query
// kept), an Azure deployment URL, whose api-version stays in the query
// (".../openai/deployments/D?api-version=V" → ".../openai/deployments/D/chat/completions?api-version=V"),
// or Azure's ".../openai/v1". A pasted ".../chat/completions" is accepted too.
func parseEndpoint(base string) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return endpoint{}, fmt.Errorf("%q is not an http(s) URL", base)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), chatSuffix)
	u.RawPath, u.Fragment = "", ""
	ep := endpoint{apiVersion: u.Query().Get("api-version")}
	prefix, deployment, isDeployment := strings.Cut(u.Path+"/", azureDeployDir)
	if isDeployment {
		deployment = strings.Trim(deployment, "/")
		if deployment == "" || strings.Contains(deployment, "/") {
			return endpoint{}, fmt.Errorf("%q: an Azure deployment URL ends in /openai/deployments/<deployment>", base)
		}
		if ep.apiVersion == "" {
			return endpoint{}, fmt.Errorf("%q is an Azure deployment URL without ?api-version=… (e.g. ?api-version=2024-10-21)", base)
		}
		ep.deployment, ep.base = deployment, u.Scheme+"://"+u.Host+prefix
	}
	ep.azure = isDeployment || ep.apiVersion != "" || azureHost(u.Hostname())
	chat := *u
	chat.Path += chatSuffix
	ep.chatURL = chat.String()
	if !isDeployment {
		noQuery := *u
		noQuery.RawQuery = ""
		ep.base = noQuery.String()
	}
	return ep, nil
}

func azureHost(host string) bool {
	host = strings.ToLower(host)
	for _, h := range azureHosts {
		if strings.HasSuffix(host, h) {
			return true
		}
	}
	return false
}

// authorize sets the key's header: api-key for Azure, a bearer token
// elsewhere, nothing when there is no key.
func (ep endpoint) authorize(h http.Header, key string) {
	switch {
	case key == "":
	case ep.azure:
		h.Set("api-key", key)
	default:
		h.Set("Authorization", "Bearer "+key)
	}
}

// modelsURL is where the endpoint lists its models: ".../models" beside
// the chat route, Azure's ".../openai/models" for a deployment URL, with
// the api-version when there is one.
func (ep endpoint) modelsURL() string {
	u := strings.TrimRight(ep.base, "/")
	if ep.deployment != "" {
		u += "/openai"
	}
	u += "/models"
	if ep.apiVersion != "" {
		u += "?" + url.Values{"api-version": {ep.apiVersion}}.Encode()
	}
	return u
}

// The probe's one tool and the word it returns.
const (
	probeToolName = "get_magic_word"
	probeWord     = "pineapple"
	probePrompt   = "Call the tool " + probeToolName + ", then reply with the word it returns and nothing else."
)

// ToolProbe is what a tool-calling round trip found.
type ToolProbe struct {
	Called bool   // the model called the tool, and answered its result
	AsText bool   // it wrote the call as text: the server parses no tool calls
	Answer string // the model's last text
}

// ProbeTools makes one tiny tool-calling round trip, the way a run does:
// a request offering one tool, then, when the model calls it, the tool's
// result back (with whatever the endpoint must get back, such as Gemini's
// thought signatures) and the model's answer. A server without a
// tool-call parser fails here, with an error that DescribeError
// words with the fix, or by writing the call as text. There is no retry.
func ProbeTools(ctx context.Context, m Model, modelName string) (ToolProbe, error) {
	req := Request{Model: modelName, Tools: []Tool{probeTool()}, Messages: []Message{userMessage(probePrompt)}}
	first, err := probeOnce(ctx, m, req)
	if err != nil {
		return ToolProbe{}, err
	}
	if len(first.ToolCalls) == 0 {
		return ToolProbe{AsText: writtenCall(first.Content), Answer: first.Content}, nil
	}
	req.Messages = append(req.Messages, first)
	for _, c := range first.ToolCalls {
		req.Messages = append(req.Messages, toolMessage(c.ID, probeWord))
	}
	second, err := probeOnce(ctx, m, req)
	if err != nil {
		return ToolProbe{}, err
	}
	return ToolProbe{Called: true, Answer: second.Content}, nil
}

func probeOnce(ctx context.Context, m Model, req Request) (Message, error) {
	ans, err := m.Complete(ctx, req)
	if err == nil {
		err = checkAnswer(&ans, len(req.Messages))
	}
	return ans.Message, err
}

func probeTool() Tool {
	return Tool{Name: probeToolName, Description: "Returns the magic word.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

// writtenCall reports whether text is a tool call written out, as models
// do when the server does not parse their calls: the tool's name, or the
// markers chat templates use for calls.
func writtenCall(text string) bool {
	return strings.Contains(text, probeToolName) ||
		containsAny(text, "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", `"arguments"`)
}

// maxModelsBytes bounds a models list (OpenRouter's, the longest, is
// about 1 MiB).
const maxModelsBytes = 8 << 20

// ListModels lists the endpoint's model ids (h9 doctor), its errors
// classified, worded and scrubbed like a chat request's.
func (m *Client) ListModels(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.idle) // a short list: one idle wait bounds it
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.ep.modelsURL(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	m.ep.authorize(req.Header, m.key)
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, m.scrub(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBytes))
	switch {
	case resp.StatusCode >= 300:
		return nil, m.scrub(decodeErrorBody(resp.StatusCode, raw, resp.Header))
	case err != nil:
		return nil, m.scrub(&droppedError{err: fmt.Errorf("reading the models list: %w", err)})
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decoding the models list: %w", err)
	}
	ids := make([]string, len(list.Data))
	for i, md := range list.Data {
		ids[i] = md.ID
	}
	return ids, nil
}

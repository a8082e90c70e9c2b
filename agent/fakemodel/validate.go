package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// check answers for the endpoint when a real one would refuse the request
// before any model sees it: bad credentials, a field a strict server does
// not know, a history it rejects, tools it cannot parse, a prompt over the
// context window. ok is false when there is nothing to refuse.
func (s *Server) check(r *http.Request, body []byte, req *request) (Reply, bool) {
	s.mu.Lock()
	key, strict, parser, limit, textOnly := s.apiKey, s.strict, s.parser, s.contextLimit, s.textOnly
	s.mu.Unlock()
	if f, bad := checkAuth(r, key); bad {
		return f, true
	}
	if strict {
		if f, bad := strictFields(body, req); bad {
			return f, true
		}
	}
	if f, bad := s.checkHistory(req.msgs, !strict); bad {
		return f, true
	}
	if f, bad := textOnly.refuseImages(req); bad {
		return f, true
	}
	if parser != 0 && len(req.Tools) > 0 {
		return parser.fault(), true
	}
	if n := estimateTokens(*req); limit > 0 && n > limit {
		return Reply{Status: http.StatusBadRequest, RawBody: contextLengthBody(limit, n)}, true
	}
	return Reply{}, false
}

// checkAuth: OpenAI's /v1 wants a bearer token, an Azure deployment its
// api-key header and an api-version, Azure's /openai/v1 either header.
// The refusal repeats the key it got, as careless proxies do, so tests
// see that h9 never shows it.
func checkAuth(r *http.Request, key string) (Reply, bool) {
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	apiKey := r.Header.Get("api-key")
	path := r.URL.Path
	deployment := strings.HasPrefix(path, "/openai/deployments/") || path == "/openai/models"
	if deployment && r.URL.Query().Get("api-version") == "" {
		return Reply{Status: http.StatusNotFound, RawBody: `{"error":{"code":"404","message":"Resource not found"}}`}, true
	}
	if key == "" {
		return Reply{}, false
	}
	switch {
	case deployment && apiKey != key:
		return Reply{Status: http.StatusUnauthorized, RawBody: `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`}, true
	case strings.HasPrefix(path, "/openai/v1/") && (apiKey == key || bearer == key):
		return Reply{}, false
	case !deployment && bearer != key:
		msg := fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", bearer+apiKey)
		return Reply{Status: http.StatusUnauthorized, RawBody: openAIErrorBody(msg, "invalid_request_error", "", "invalid_api_key")}, true
	}
	return Reply{}, false
}

// mistralFields are the request fields Mistral accepts; it refuses any
// other (422 extra_forbidden), stream_options and user included.
var mistralFields = map[string]bool{"model": true, "messages": true, "tools": true, "tool_choice": true,
	"stream": true, "temperature": true, "top_p": true, "max_tokens": true, "stop": true, "random_seed": true,
	"response_format": true, "presence_penalty": true, "frequency_penalty": true, "n": true,
	"parallel_tool_calls": true, "safe_prompt": true, "prediction": true, "prompt_mode": true}

func strictFields(body []byte, req *request) (Reply, bool) {
	var top map[string]json.RawMessage
	_ = json.Unmarshal(body, &top)
	for k := range top {
		if !mistralFields[k] {
			return Reply{Status: http.StatusUnprocessableEntity, RawBody: mistralForbidden(k)}, true
		}
	}
	for i, m := range req.msgs {
		if m.ReasoningContent != nil {
			return Reply{Status: http.StatusUnprocessableEntity, RawBody: mistralForbidden("messages", i, m.Role, "reasoning_content")}, true
		}
	}
	return Reply{}, false
}

// checkHistory applies the rules OpenAI enforces (content is a string
// except beside tool calls; every call is answered by the tool messages
// right after it, and nothing else is), call ids unique within a message,
// and what the server asked to get back: Gemini's thought signatures and
// DeepSeek's reasoning_content on the calls it made (unless strict: no
// server both wants reasoning_content back and refuses it).
func (s *Server) checkHistory(msgs []inMessage, wantReasoning bool) (Reply, bool) {
	var open map[string]bool
	for i, m := range msgs {
		if m.Role != "tool" && len(open) > 0 {
			return invalid(fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", keys(open)), "messages")
		}
		if m.nullContent() && (m.Role != "assistant" || len(m.ToolCalls) == 0) {
			return invalid("Invalid value for 'content': expected a string, got null.", fmt.Sprintf("messages.[%d].content", i))
		}
		switch m.Role {
		case "assistant":
			if len(m.ToolCalls) == 0 {
				continue
			}
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				if c.ID == "" || open[c.ID] {
					return invalid(fmt.Sprintf("Duplicate or empty tool_call id %q in messages[%d].tool_calls.", c.ID, i), fmt.Sprintf("messages.[%d].tool_calls", i))
				}
				open[c.ID] = true
				if f, bad := s.checkIssued(i, m, c, wantReasoning); bad {
					return f, true
				}
			}
		case "tool":
			if !open[m.ToolCallID] {
				return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i))
			}
			delete(open, m.ToolCallID)
		}
	}
	if len(open) > 0 {
		return invalid(fmt.Sprintf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", keys(open)), "messages")
	}
	return Reply{}, false
}

// checkIssued: a call this server made with a signature or reasoning must
// come back with it.
func (s *Server) checkIssued(i int, m inMessage, c inCall, wantReasoning bool) (Reply, bool) {
	s.mu.Lock()
	want, found := s.issued[c.ID]
	s.mu.Unlock()
	if !found {
		return Reply{}, false
	}
	if want.signature != "" && signatureOf(c) != want.signature {
		msg := fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", c.Function.Name, i+1)
		return GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", msg), true
	}
	if wantReasoning && want.reasoning != "" && (m.ReasoningContent == nil || *m.ReasoningContent != want.reasoning) {
		return invalid("The reasoning_content in the thinking mode must be passed back to the API.", "")
	}
	return Reply{}, false
}

func signatureOf(c inCall) string {
	var extra struct {
		Google struct {
			ThoughtSignature string `json:"thought_signature"`
		} `json:"google"`
	}
	if len(bytes.TrimSpace(c.ExtraContent)) > 0 {
		_ = json.Unmarshal(c.ExtraContent, &extra)
	}
	return extra.Google.ThoughtSignature
}

func invalid(msg, param string) (Reply, bool) {
	return Reply{Status: http.StatusBadRequest, RawBody: openAIErrorBody(msg, "invalid_request_error", param, "")}, true
}

func keys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return strings.Join(ks, ", ")
}

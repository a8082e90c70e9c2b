package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeError answers with OpenAI's error shape, so an OpenAI client reads
// an API error.
func writeError(w http.ResponseWriter, status int, retryAfter, msg string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeBody(w, status, openAIErrorBody(msg, "fakemodel_error", "", fmt.Sprint(status)))
}

func writeBody(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func openAIErrorBody(msg, typ, param, code string) string {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": code}
	if param != "" {
		e["param"] = param
	}
	data, _ := json.Marshal(map[string]any{"error": e})
	return string(data)
}

func contextLengthBody(limit, got int) string {
	return openAIErrorBody(fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, got),
		"invalid_request_error", "messages", "context_length_exceeded")
}

// geminiBody is Gemini's error: an array holding one error object.
func geminiBody(status int, state, msg string) string {
	data, _ := json.Marshal([]any{map[string]any{"error": map[string]any{"code": status, "message": msg, "status": state}}})
	return string(data)
}

// mistralForbidden is Mistral's 422 for a field it does not know.
func mistralForbidden(loc ...any) string {
	detail := map[string]any{"type": "extra_forbidden", "loc": append([]any{"body"}, loc...), "msg": "Extra inputs are not permitted"}
	data, _ := json.Marshal(map[string]any{"object": "error", "message": map[string]any{"detail": []any{detail}},
		"type": "invalid_request_error", "param": nil, "code": nil})
	return string(data)
}

package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// chat serves POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: reading the request: "+err.Error())
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: request body is not a chat request: "+err.Error())
		return
	}
	reply, latency, ok := s.next(req)
	if !ok {
		writeError(w, http.StatusBadRequest, "", "fakemodel: no scripted reply left")
		return
	}
	if !wait(r, latency+reply.Latency) {
		return
	}
	for k, vs := range reply.Header {
		w.Header()[k] = vs
	}
	switch {
	case reply.RawBody != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(max(reply.Status, http.StatusOK))
		_, _ = w.Write([]byte(reply.RawBody))
	case reply.Status >= 400:
		writeError(w, reply.Status, reply.RetryAfter, http.StatusText(reply.Status)+" (scripted fault)")
	default:
		writeJSON(w, s.response(req, reply))
	}
}

// response builds the completion body for a normal reply.
func (s *Server) response(req openai.ChatCompletionRequest, reply Reply) openai.ChatCompletionResponse {
	prompt := reply.PromptTokens
	if prompt == 0 {
		prompt = estimateTokens(req)
	}
	completion := reply.CompletionTokens
	if completion == 0 {
		completion = 1 + len(reply.Content)/4
	}
	resp := openai.ChatCompletionResponse{
		ID:      "chatcmpl-fake",
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Usage:   openai.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion},
	}
	if reply.EmptyChoices {
		resp.Choices = []openai.ChatCompletionChoice{}
		return resp
	}
	msg := reply.message(s.nextID)
	finish := openai.FinishReasonStop
	if len(msg.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	resp.Choices = []openai.ChatCompletionChoice{{Message: msg, FinishReason: finish}}
	return resp
}

// listModels serves GET /v1/models.
func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	s.mu.Unlock()
	list := openai.ModelsList{}
	for _, id := range ids {
		list.Models = append(list.Models, openai.Model{ID: id, Object: "model", OwnedBy: "fakemodel"})
	}
	writeJSON(w, list)
}

// wait sleeps d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// estimateTokens approximates prompt tokens as characters / 4.
func estimateTokens(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			n += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	return 1 + n/4
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with OpenAI's error shape, so go-openai returns an *openai.APIError.
func writeError(w http.ResponseWriter, status int, retryAfter, msg string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": "fakemodel_error", "code": status}}
	_ = json.NewEncoder(w).Encode(body)
}

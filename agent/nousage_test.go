package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// An endpoint that never reports usage (some local servers and proxies)
// still gets its history compacted: the prompt size is estimated.
func TestCompactionWithoutReportedUsage(t *testing.T) {
	t.Parallel()
	var summarised atomic.Bool
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		msg := map[string]any{"role": "assistant", "content": "finished"}
		switch {
		case req.Messages[0].Content == summarySystemPrompt:
			summarised.Store(true)
			msg["content"] = testSummary
		case calls.Add(1) <= 6: // enough history to summarise; the outputs make it long
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{
				"name": "bash", "arguments": `{"command":"head -c 6000 /dev/zero | tr '\\0' a"}`}}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	h := newHarness(t, func(c *Config) {
		c.ContextWindow = 1000
		c.Model = newTestModel(t, srv.URL+"/v1", "") // it ignores "stream": JSON either way
	})
	res, rec := h.mustRun("s", "make some output")
	if !summarised.Load() || len(rec.of(EventCompacted)) == 0 {
		t.Errorf("no compaction without usage (summariser called: %v, events: %d)", summarised.Load(), len(rec.of(EventCompacted)))
	}
	if !strings.Contains(res.Text, "finished") {
		t.Errorf("final text = %q", res.Text)
	}
}

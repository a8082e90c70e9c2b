package openai

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Error bodies in every shape endpoints use, read into one form.
func TestDecodeErrorBody(t *testing.T) {
	tests := []struct {
		name, body             string
		status                 int
		code, typ, msgFragment string
	}{
		{"OpenAI", `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, 429, "insufficient_quota", "insufficient_quota", "exceeded your current quota"},
		{"Gemini's array", `[{"error":{"code":400,"message":"Function call is missing a thought_signature","status":"INVALID_ARGUMENT"}}]`, 400, "400", "INVALID_ARGUMENT", "thought_signature"},
		{"vLLM's top level", `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice","type":"BadRequestError","param":null,"code":400}`, 400, "400", "BadRequestError", "--enable-auto-tool-choice"},
		{"Mistral's details", `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","user"]}]},"type":"invalid_request_error","param":null,"code":null}`, 422, "", "invalid_request_error", `"loc":["body","user"]`},
		{"OpenRouter's metadata", `{"error":{"code":502,"message":"Provider returned error","metadata":{"raw":"upstream overloaded"}}}`, 502, "502", "", "Provider returned error: upstream overloaded"},
		{"FastAPI detail", `{"detail":"Not Found"}`, 404, "", "", "Not Found"},
		{"error as text", `{"error":"model 'x' not found"}`, 404, "", "", "model 'x' not found"},
		{"a proxy's HTML", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", 502, "", "", "502 Bad Gateway"},
		{"empty body", "", 503, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeErrorBody(tt.status, []byte(tt.body), http.Header{})
			if e.Status != tt.status || e.Code != tt.code || e.Type != tt.typ || !strings.Contains(e.Message, tt.msgFragment) {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	ep := func(status int, code, msg string) error {
		return &EndpointError{Status: status, Code: code, Message: msg}
	}
	tests := []struct {
		name string
		err  error
		want failure
	}{
		{"429 insufficient_quota", ep(429, "insufficient_quota", "You exceeded your current quota"), failQuota},
		{"402", ep(402, "", "Insufficient Balance"), failQuota},
		{"429", ep(429, "rate_limit_exceeded", "Rate limit reached"), failRateLimit},
		{"llama.cpp 500", ep(500, "500", "tools param requires --jinja flag"), failSetup},
		{"Ollama without tools", ep(400, "", "registry.ollama.ai/library/gemma:2b does not support tools"), failSetup},
		{"OpenAI overflow", ep(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens"), failOverflow},
		{"llama.cpp overflow", &EndpointError{Status: 400, Type: "exceed_context_size_error", Message: "request (5000 tokens) exceeds the available context size (4096 tokens)"}, failOverflow},
		{"Mistral overflow", ep(400, "", "Prompt contains 40000 tokens, too large for model with 32768 maximum context length"), failOverflow},
		{"401", ep(401, "invalid_api_key", "Incorrect API key"), failAuth},
		{"404", ep(404, "", "Resource not found"), failNotFound},
		{"502", ep(502, "", "Bad Gateway"), failServer},
		{"in-body 502", ep(0, "502", "Provider disconnected"), failServer},
		{"400", ep(400, "", "Invalid value for 'content'"), failRejected},
		{"idle", fmt.Errorf("wrapped: %w", &idleError{}), failIdle},
		{"EOF", fmt.Errorf("Post \"x\": %w", io.EOF), failDropped},
		{"unexpected EOF", &droppedError{err: io.ErrUnexpectedEOF}, failDropped},
		{"refused", &net.OpError{Op: "dial", Err: fmt.Errorf("connect: connection refused")}, failUnreachable},
		{"DNS", &net.DNSError{Err: "no such host", Name: "x"}, failUnreachable},
		{"empty", &emptyAnswerError{finish: "length"}, failEmpty},
		{"garbage", fmt.Errorf("decoding the answer: invalid character"), failOther},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestStatedWindow(t *testing.T) {
	for msg, want := range map[string]int{
		"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens":                 8192,
		"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it":              4096,
		"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length": 32768,
		"The input token count (1200000) exceeds the maximum number of tokens allowed (1,048,576).":              1048576,
		"prompt is too long": 0,
	} {
		if got := statedWindow(msg); got != want {
			t.Errorf("statedWindow(%q) = %d, want %d", msg, got, want)
		}
	}
}

// Failure words name the cause, carry the endpoint's own words (capped,
// one line) and say how many tries were made.
func TestDescribeModelError(t *testing.T) {
	long := strings.Repeat("very long message ", 100)
	tests := []struct {
		err  error
		want []string
	}{
		{&modelError{tries: 4, err: &EndpointError{Status: 429, Message: "Rate limit reached for gpt-4.1"}}, []string{"rate limiting h9 (HTTP 429)", "after 4 tries", "Rate limit reached for gpt-4.1"}},
		{&modelError{tries: 1, err: &EndpointError{Status: 500, Code: "500", Message: "tools param requires --jinja flag"}}, []string{"not set up for tool calls (HTTP 500)", "Fix: start llama-server with --jinja"}},
		{&modelError{tries: 1, err: &EndpointError{Status: 400, Message: long + "\nsecond line"}}, []string{"rejected the request (HTTP 400)", "…"}},
		{&modelError{tries: 2, err: &emptyAnswerError{finish: "content_filter"}}, []string{"empty answer twice in a row", "content filter"}},
		{&modelError{tries: 3, err: &net.OpError{Op: "dial", Err: fmt.Errorf("connect: connection refused")}}, []string{"could not be reached (3 tries): connect: connection refused", "OPENAI_BASE_URL"}},
		{&modelError{tries: 1, err: fmt.Errorf("decoding the answer: %w", fmt.Errorf("invalid character 'x'"))}, []string{"could not understand: invalid character 'x'"}},
	}
	for _, tt := range tests {
		got := DescribeError(tt.err)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("DescribeError(%v) = %q, want %q", tt.err, got, w)
			}
		}
		if strings.Contains(got, "\n") || len([]rune(got)) > endpointTextLimit+300 {
			t.Errorf("not one short line: %q", got)
		}
	}
}

package fakemodel_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/h9-app/h9/agent/fakemodel"
	openai "github.com/sashabaranov/go-openai"
)

// post sends a raw chat request body and returns the status and body.
func post(t *testing.T, url string, body string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// go-openai's own stream reader understands the fake's stream: tool calls
// by index, the usage chunk.
func TestStreamReadsWithGoOpenAI(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(fakemodel.ToolCalls(fakemodel.C("bash", `{"command":"ls -la /tmp"}`), fakemodel.C("read_file", `{"path":"a.txt"}`)).WithUsage(50, 7))
	stream, err := srv.Client().CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	args := map[int]string{}
	var usage *openai.Usage
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			for _, tc := range c.Delta.ToolCalls {
				args[*tc.Index] += tc.Function.Arguments
			}
		}
	}
	if args[0] != `{"command":"ls -la /tmp"}` || args[1] != `{"path":"a.txt"}` || usage == nil || usage.PromptTokens != 50 {
		t.Errorf("args %v, usage %+v", args, usage)
	}
}

// The fake refuses the histories OpenAI refuses.
func TestHistoryChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, messages, want string
	}{
		{"null content", `[{"role":"user","content":"hi"},{"role":"assistant","content":null}]`, "expected a string, got null"},
		{"missing content", `[{"role":"user"}]`, "expected a string, got null"},
		{"unanswered call", `[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"next"}]`, "did not have response messages: a"},
		{"stray result", `[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"x","content":"r"}]`, "must be a response to a preceeding message"},
		{"repeated id", `[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f"}},{"id":"a","type":"function","function":{"name":"g"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]`, "Duplicate or empty tool_call id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.New()
			defer srv.Close()
			srv.Enqueue(fakemodel.Text("never"))
			status, body := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":`+tt.messages+`}`, http.Header{})
			if status != 400 || !strings.Contains(body, tt.want) || srv.Pending() != 1 {
				t.Errorf("status %d, body %s, pending %d", status, body, srv.Pending())
			}
		})
	}
}

// A signed call must come back signed (Gemini 3).
func TestSignatureRequired(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(fakemodel.ToolCalls(fakemodel.Call{ID: "c1", Name: "f", Args: "{}", Signature: "sig"}), fakemodel.Text("a"), fakemodel.Text("b"))
	status, body := post(t, srv.URL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, http.Header{})
	if status != 200 || !strings.Contains(body, `"extra_content":{"google":{"thought_signature":"sig"}}`) {
		t.Fatalf("%d %s", status, body)
	}
	history := func(extra string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}` + extra + `}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`
	}
	if status, body := post(t, srv.URL()+"/chat/completions", history(""), http.Header{}); status != 400 || !strings.HasPrefix(body, `[{"error"`) || !strings.Contains(body, "thought_signature") {
		t.Errorf("unsigned: %d %s", status, body)
	}
	if status, body := post(t, srv.URL()+"/chat/completions", history(`,"extra_content":{"google":{"thought_signature":"sig"}}`), http.Header{}); status != 200 {
		t.Errorf("signed: %d %s", status, body)
	}
}

func TestServerOptions(t *testing.T) {
	t.Parallel()
	msg := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]`
	tests := []struct {
		name   string
		opts   []fakemodel.Option
		path   string
		body   string
		header http.Header
		status int
		want   string
	}{
		{"context limit", []fakemodel.Option{fakemodel.WithContextLimit(50)}, "/v1/chat/completions", msg + "}", nil, 400, "context_length_exceeded"},
		{"strict fields", []fakemodel.Option{fakemodel.WithStrictFields()}, "/v1/chat/completions", msg + `,"user":"s"}`, nil, 422, "extra_forbidden"},
		{"no tool parser", []fakemodel.Option{fakemodel.WithoutToolParser(fakemodel.LlamaCpp)}, "/v1/chat/completions", msg + `,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}`, nil, 500, "--jinja"},
		{"bearer wanted", []fakemodel.Option{fakemodel.WithAPIKey("k")}, "/v1/chat/completions", msg + "}", http.Header{"Api-Key": {"k"}}, 401, "Incorrect API key"},
		{"Azure wants api-key", []fakemodel.Option{fakemodel.WithAPIKey("k")}, "/openai/deployments/d/chat/completions?api-version=1", msg + "}", http.Header{"Authorization": {"Bearer k"}}, 401, "Access denied"},
		{"Azure wants api-version", nil, "/openai/deployments/d/chat/completions", msg + "}", nil, 404, "Resource not found"},
		{"Azure deployment", []fakemodel.Option{fakemodel.WithAPIKey("k")}, "/openai/deployments/d/chat/completions?api-version=1", msg + "}", http.Header{"Api-Key": {"k"}}, 200, "chat.completion"},
		{"Azure v1 takes either", []fakemodel.Option{fakemodel.WithAPIKey("k")}, "/openai/v1/chat/completions", msg + "}", http.Header{"Authorization": {"Bearer k"}}, 200, "chat.completion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.New(tt.opts...)
			defer srv.Close()
			srv.Enqueue(fakemodel.Text("ok"))
			base := strings.TrimSuffix(srv.URL(), "/v1")
			status, body := post(t, base+tt.path, tt.body, tt.header)
			if status != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("status %d body %s", status, body)
			}
		})
	}
}

// Drops close the connection before or inside the body.
func TestDrops(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(fakemodel.Dropped(), fakemodel.DroppedMidBody(fakemodel.Text(strings.Repeat("a", 100))))
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if _, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body)); !errors.Is(err, io.EOF) {
		t.Errorf("dropped before: %v", err)
	}
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(&bytes.Buffer{}, resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("dropped mid-body: %v", err)
	}
}

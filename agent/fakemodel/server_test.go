package fakemodel_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/h9-app/h9/agent/fakemodel"
	openai "github.com/sashabaranov/go-openai"
)

func chat(t *testing.T, c *openai.Client, content string) (openai.ChatCompletionResponse, error) {
	t.Helper()
	return c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "fake-model",
		User:     "session-1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: content}},
	})
}

func TestScriptedReplies(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(
		fakemodel.Text("hello").WithUsage(900, 5),
		fakemodel.ToolCalls(fakemodel.C("bash", `{"command":"ls"}`), fakemodel.Call{ID: "mine", Name: "read_file", Args: `{"path":"a"}`}),
	)
	srv.SetHandler(func(req openai.ChatCompletionRequest) fakemodel.Reply { return fakemodel.Text("handled " + req.User) })
	c := srv.Client()

	r1, err := chat(t, c, "one")
	if err != nil {
		t.Fatal(err)
	}
	if r1.Choices[0].Message.Content != "hello" || r1.Usage.PromptTokens != 900 || r1.Usage.TotalTokens != 905 {
		t.Errorf("first reply = %+v", r1)
	}
	r2, err := chat(t, c, "two")
	if err != nil {
		t.Fatal(err)
	}
	var calls [][3]string
	for _, tc := range r2.Choices[0].Message.ToolCalls {
		calls = append(calls, [3]string{tc.ID, tc.Function.Name, tc.Function.Arguments})
	}
	want := [][3]string{{"call_1", "bash", `{"command":"ls"}`}, {"mine", "read_file", `{"path":"a"}`}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if r2.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish reason = %q", r2.Choices[0].FinishReason)
	}
	r3, err := chat(t, c, "three")
	if err != nil || r3.Choices[0].Message.Content != "handled session-1" {
		t.Errorf("handler reply = %+v, %v", r3, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[2].Messages[0].Content != "three" || srv.Calls() != 3 {
		t.Errorf("recorded %d requests", len(reqs))
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      fakemodel.Reply
		wantStatus int
	}{
		{"rate limited", fakemodel.RateLimited(1500 * time.Millisecond), 429},
		{"server error", fakemodel.ServerError(), 500},
		{"unauthorised", fakemodel.Status(401), 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.New()
			defer srv.Close()
			srv.Enqueue(tt.reply)
			resp, err := chat(t, srv.Client(), "x")
			var ae *openai.APIError
			if !errors.As(err, &ae) || ae.HTTPStatusCode != tt.wantStatus {
				t.Fatalf("err = %v, want APIError %d", err, tt.wantStatus)
			}
			if tt.wantStatus == 429 {
				h := resp.Header()
				if h.Get("Retry-After") != "2" || h.Get("retry-after-ms") != "1500" {
					t.Errorf("headers = %v", h)
				}
			}
		})
	}
}

func TestMalformedReplies(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New()
	defer srv.Close()
	srv.Enqueue(fakemodel.InvalidJSON(), fakemodel.EmptyChoices(), fakemodel.BrokenToolCall("write_file"))
	c := srv.Client()
	if _, err := chat(t, c, "x"); err == nil {
		t.Error("invalid JSON decoded without error")
	}
	if r, err := chat(t, c, "x"); err != nil || len(r.Choices) != 0 {
		t.Errorf("empty choices = %+v, %v", r, err)
	}
	r, err := chat(t, c, "x")
	if err != nil || r.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"path": "unterminated` {
		t.Errorf("broken call = %+v, %v", r, err)
	}
	var ae *openai.APIError
	if _, err := chat(t, c, "x"); !errors.As(err, &ae) || ae.HTTPStatusCode != http.StatusBadRequest || srv.Unscripted() != 1 {
		t.Errorf("unscripted request: err %v, unscripted %d", err, srv.Unscripted())
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(fakemodel.WithModels("a", "b"))
	defer srv.Close()
	list, err := srv.Client().ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

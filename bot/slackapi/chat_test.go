package slackapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

// chatServer is a bare HTTP server for chatSend: it records the last form
// and path and answers with answer.
type chatServer struct {
	form   url.Values
	path   string
	answer func(w http.ResponseWriter)
	api    *Client
}

func newChatServer(t *testing.T) *chatServer {
	cs := &chatServer{answer: func(http.ResponseWriter) {}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.path = r.URL.Path
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		cs.form = r.PostForm
		cs.answer(w)
	}))
	t.Cleanup(srv.Close)
	cs.api = New("xoxb-1", "xapp-1", srv.URL+"/api/", slog.New(slog.DiscardHandler), nil)
	return cs
}

var chatMsg = render.Message{Text: "hi <@U1>", Blocks: []slack.Block{slack.NewDividerBlock()}}

// The form chatSend sends for a post and for an edit.
func TestChatSendForm(t *testing.T) {
	cs, ctx := newChatServer(t), context.Background()
	cs.answer = func(w http.ResponseWriter) {
		io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1.2","message":{"type":"message","blocks":[{"type":"divider"}]}}`)
	}
	ts, err := cs.api.chatSend(ctx, "C1", "0.1", "", chatMsg)
	if err != nil || ts != "1.2" {
		t.Fatalf("post = %q, %v; want 1.2", ts, err)
	}
	want := url.Values{"token": {"xoxb-1"}, "channel": {"C1"}, "text": {"hi <@U1>"}, "thread_ts": {"0.1"}, "blocks": {`[{"type":"divider"}]`}}
	if cs.path != "/api/chat.postMessage" || cs.form.Encode() != want.Encode() {
		t.Errorf("post sent %s %v, want %v", cs.path, cs.form, want)
	}
	if _, err := cs.api.chatSend(ctx, "C1", "", "1.2", render.Message{Text: "plain"}); err != nil {
		t.Fatal(err)
	}
	if cs.path != "/api/chat.update" || cs.form.Get("ts") != "1.2" || cs.form.Get("blocks") != "[]" {
		t.Errorf("update sent %s %v, want ts 1.2 and blocks []", cs.path, cs.form)
	}
	cs.path = ""
	if _, err := cs.api.chatSend(ctx, "C1", "", "", render.Message{}); !errors.Is(err, errMessageLimits) || cs.path != "" {
		t.Errorf("a message without text: err %v, sent to %q; want errMessageLimits and nothing sent", err, cs.path)
	}
}

// Slack's answers come back as slack-go's error types, which Call's retries rely on.
func TestChatSendAnswers(t *testing.T) {
	cs, ctx := newChatServer(t), context.Background()
	cs.answer = func(w http.ResponseWriter) {
		io.WriteString(w, `{"ok":false,"error":"invalid_blocks","response_metadata":{"messages":["[ERROR] bad"]}}`)
	}
	_, err := cs.api.chatSend(ctx, "C1", "", "", chatMsg)
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" || len(se.ResponseMetadata.Messages) != 1 {
		t.Errorf("ok:false gave %#v, want SlackErrorResponse invalid_blocks with its message", err)
	}

	cs.answer = func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	_, err = cs.api.chatSend(ctx, "C1", "", "", chatMsg)
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Errorf("429 gave %#v, want RateLimitedError of 2s", err)
	}

	cs.answer = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html>busy</html>")
	}
	if _, err = cs.api.chatSend(ctx, "C1", "", "", chatMsg); !transientError(err) {
		t.Errorf("503 gave %#v, want a transient StatusCodeError", err)
	}

	cs.answer = func(w http.ResponseWriter) { io.WriteString(w, `{"ok":true,"message_ts":"3.4"}`) }
	if ts, err := cs.api.chatSend(ctx, "C1", "", "", chatMsg); err != nil || ts != "3.4" {
		t.Errorf("answer with only message_ts = %q, %v; want 3.4 as slack-go reads it", ts, err)
	}

	cs.answer = func(w http.ResponseWriter) { io.WriteString(w, `{"ok":tru`) }
	if _, err = cs.api.chatSend(ctx, "C1", "", "", chatMsg); err == nil {
		t.Error("a truncated answer gave no error")
	}
}

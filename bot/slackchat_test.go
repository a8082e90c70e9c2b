package bot

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

// chatSend against a bare HTTP server: the form it sends, and Slack's
// answers mapped to slack-go's error types that call's retries rely on.
func TestChatSendFormAndAnswers(t *testing.T) {
	var form url.Values
	var path string
	answer := func(w http.ResponseWriter) {}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		form = r.PostForm
		answer(w)
	}))
	defer srv.Close()
	api := newSlackAPI("xoxb-1", "xapp-1", srv.URL+"/api/", slog.New(slog.DiscardHandler))
	ctx := context.Background()
	msg := render.Message{Text: "hi <@U1>", Blocks: []slack.Block{slack.NewDividerBlock()}}

	answer = func(w http.ResponseWriter) {
		io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1.2","message":{"type":"message","blocks":[{"type":"divider"}]}}`)
	}
	ts, err := api.chatSend(ctx, "C1", "0.1", "", msg)
	if err != nil || ts != "1.2" {
		t.Fatalf("post = %q, %v; want 1.2", ts, err)
	}
	want := url.Values{"token": {"xoxb-1"}, "channel": {"C1"}, "text": {"hi <@U1>"}, "thread_ts": {"0.1"}, "blocks": {`[{"type":"divider"}]`}}
	if path != "/api/chat.postMessage" || form.Encode() != want.Encode() {
		t.Errorf("post sent %s %v, want %v", path, form, want)
	}

	if _, err := api.chatSend(ctx, "C1", "", "1.2", text("plain")); err != nil {
		t.Fatal(err)
	}
	if path != "/api/chat.update" || form.Get("ts") != "1.2" || form.Get("blocks") != "[]" {
		t.Errorf("update sent %s %v, want ts 1.2 and blocks []", path, form)
	}

	answer = func(w http.ResponseWriter) {
		io.WriteString(w, `{"ok":false,"error":"invalid_blocks","response_metadata":{"messages":["[ERROR] bad"]}}`)
	}
	_, err = api.chatSend(ctx, "C1", "", "", msg)
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" || len(se.ResponseMetadata.Messages) != 1 {
		t.Errorf("ok:false gave %#v, want SlackErrorResponse invalid_blocks with its message", err)
	}

	answer = func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	_, err = api.chatSend(ctx, "C1", "", "", msg)
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Errorf("429 gave %#v, want RateLimitedError of 2s", err)
	}

	answer = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html>busy</html>")
	}
	_, err = api.chatSend(ctx, "C1", "", "", msg)
	if !transientSlackError(err) {
		t.Errorf("503 gave %#v, want a transient StatusCodeError", err)
	}

	answer = func(w http.ResponseWriter) { io.WriteString(w, `{"ok":true,"message_ts":"3.4"}`) }
	if ts, err := api.chatSend(ctx, "C1", "", "", msg); err != nil || ts != "3.4" {
		t.Errorf("answer with only message_ts = %q, %v; want 3.4 as slack-go reads it", ts, err)
	}

	answer = func(w http.ResponseWriter) { io.WriteString(w, `{"ok":tru`) }
	if _, err = api.chatSend(ctx, "C1", "", "", msg); err == nil {
		t.Error("a truncated answer gave no error")
	}
}

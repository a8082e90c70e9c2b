package fakeslack_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
)

// withSessionStatus is a chat.stopStream with session_status, which slack-go has
// no option for: the field goes into the form slack-go sends.
func withSessionStatus(s *fakeslack.Server, status string) slack.MsgOption {
	return slack.UnsafeMsgOptionEndpoint(s.APIURL()+"chat.stopStream", func(v url.Values) { v.Set("session_status", status) })
}

// A stream's life through slack-go's calls: started with text in a
// thread, growing with each append, stopped with its last words; the
// session moves to session_status, or to active without one.
func TestStreamLifecycle(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	api, ctx := newAPI(s, "xoxb-test"), testCtx(t)
	root := postRoot(t, api)
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root}); err != nil {
		t.Fatal(err)
	}
	ch, ts, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"),
		slack.MsgOptionRecipientTeamID("T1"), slack.MsgOptionMarkdownText("Reading"))
	if err != nil || ch != "C1" || ts <= root {
		t.Fatalf("start = %q %q %v", ch, ts, err)
	}
	for _, more := range []string{" the code", " now."} {
		if _, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText(more)); err != nil {
			t.Fatal(err)
		}
	}
	if !s.StreamOpen("C1", ts) || s.StreamText("C1", ts) != "Reading the code now." {
		t.Fatalf("open stream holds %q", s.StreamText("C1", ts))
	}
	if open := s.OpenStreams("C1", root); len(open) != 1 || open[0] != ts {
		t.Errorf("open streams = %q", open)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText(" Done."), withSessionStatus(s, "suspended")); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Message("C1", ts)
	if m.Streaming || !m.Streamed || m.Text != "Reading the code now. Done." || m.Appends != 2 || m.ThreadTS != root ||
		m.RecipientUser != "U1" || m.RecipientTeam != "T1" || m.BotID != "BBOT" {
		t.Errorf("stopped stream = %+v", m)
	}
	a, _ := s.AgentSession("C1", root)
	if last := a.History[len(a.History)-1]; last.Status != "suspended" || last.Method != "chat.stopStream" {
		t.Errorf("session after stop = %+v", a.History)
	}
	for _, call := range []func() error{
		func() error {
			_, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText("late"))
			return err
		},
		func() error { _, _, err := api.StopStreamContext(ctx, "C1", ts); return err },
	} {
		if err := call(); slackCode(err) != "message_not_in_streaming_state" {
			t.Errorf("after stop: %v, want message_not_in_streaming_state", err)
		}
	}

	// Without session_status the session becomes active, Slack's default.
	_, ts2, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts2, slack.MsgOptionMarkdownText("Second.")); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.AgentSession("C1", root); a.Status != "active" || s.StreamText("C1", ts2) != "Second." {
		t.Errorf("after a stop without session_status: status %q, text %q", a.Status, s.StreamText("C1", ts2))
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations = %q", v)
	}
}

// Each way Slack refuses a stream call, with the code its reference lists.
func TestStreamErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	api, ctx := newAPI(s, "xoxb-test"), testCtx(t)
	root := postRoot(t, api)
	to := []slack.MsgOption{slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T1")}
	start := func(channel string, opts ...slack.MsgOption) (string, error) {
		_, ts, err := api.StartStreamContext(ctx, channel, opts...)
		return ts, err
	}
	s.CannotStream("C2")
	for _, tc := range []struct {
		name    string
		channel string
		opts    []slack.MsgOption
		want    string
	}{
		{"no thread", "C1", []slack.MsgOption{slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T1")}, "invalid_arguments"},
		{"no recipient user", "C1", []slack.MsgOption{slack.MsgOptionTS(root), slack.MsgOptionRecipientTeamID("T1")}, "missing_recipient_user_id"},
		{"no recipient team", "C1", []slack.MsgOption{slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1")}, "missing_recipient_team_id"},
		{"bad channel", "X1", to, "channel_not_found"},
		{"a channel that cannot stream", "C2", to, "channel_type_not_supported"},
		{"text too long", "C1", append(to, slack.MsgOptionMarkdownText(strings.Repeat("a", 12001))), "msg_too_long"},
	} {
		if _, err := start(tc.channel, tc.opts...); slackCode(err) != tc.want {
			t.Errorf("start, %s: %v, want %s", tc.name, err, tc.want)
		}
	}
	// A DM needs no recipient.
	if _, err := start("D1", slack.MsgOptionTS("1700000000.000001")); err != nil {
		t.Errorf("start in a DM: %v", err)
	}

	ts, err := start("C1", append(to, slack.MsgOptionMarkdownText(strings.Repeat("a", 12000)))...)
	if err != nil {
		t.Fatal(err)
	}
	_, userTS, _ := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	const userMsg = "1699999999.000100"
	s.Restore([]fakeslack.Message{{Channel: "C1", TS: userMsg, ThreadTS: root, User: "U1", Text: "a user's reply"}})
	appendTo := func(ts, text string) error {
		_, _, err := api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText(text))
		return err
	}
	for _, tc := range []struct{ name, ts, text, want string }{
		{"unknown message", "1.000002", "x", "message_not_found"},
		{"someone else's message", userMsg, "x", "message_not_owned_by_app"},
		{"not a stream", userTS, "x", "message_not_in_streaming_state"},
		{"no text", ts, "", "no_text"},
		{"text too long", ts, strings.Repeat("b", 12001), "msg_too_long"},
	} {
		if err := appendTo(tc.ts, tc.text); slackCode(err) != tc.want {
			t.Errorf("append, %s: %v, want %s", tc.name, err, tc.want)
		}
	}
	// The whole message stays within a message's 40,000 characters.
	for range 2 {
		if err := appendTo(ts, strings.Repeat("c", 12000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := appendTo(ts, strings.Repeat("d", 4001)); slackCode(err) != "msg_too_long" {
		t.Errorf("append past 40,000 characters: %v", err)
	}
	if err := appendTo(ts, strings.Repeat("d", 4000)); err != nil {
		t.Errorf("append up to 40,000 characters: %v", err)
	}
	if _, _, err := api.StopStreamContext(ctx, "C1", ts, withSessionStatus(s, "sleeping")); slackCode(err) != "invalid_arguments" {
		t.Errorf("stop with an unknown session_status: %v", err)
	}
	if n := len(s.Violations()); n != 3 {
		t.Errorf("violations = %q, want the 3 texts too long", s.Violations())
	}
}

// slack-go sends the stream methods as forms; Slack takes JSON with a
// Bearer token too, and so does the fake.
func TestStreamJSONEncoding(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	root := postRoot(t, newAPI(s, "xoxb-test"))
	post := func(method string, body map[string]any) map[string]any {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", s.APIURL()+method, strings.NewReader(string(data)))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer xoxb-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	if out := post("agents.sessions.setStatus", map[string]any{"status": "processing", "channel_id": "C1", "thread_ts": root}); out["ok"] != true {
		t.Fatalf("setStatus as JSON = %v", out)
	}
	out := post("chat.startStream", map[string]any{"channel": "C1", "thread_ts": root, "recipient_user_id": "U1",
		"recipient_team_id": "T1", "markdown_text": "json"})
	ts, _ := out["ts"].(string)
	if out["ok"] != true || ts == "" {
		t.Fatalf("startStream as JSON = %v", out)
	}
	if out := post("chat.stopStream", map[string]any{"channel": "C1", "ts": ts, "session_status": "closed"}); out["ok"] != true {
		t.Fatalf("stopStream as JSON = %v", out)
	}
	if seq := s.StatusSequence("C1", root); len(seq) != 2 || seq[1] != "closed" || s.StreamText("C1", ts) != "json" {
		t.Errorf("after JSON calls: %q, %q", seq, s.StreamText("C1", ts))
	}
}

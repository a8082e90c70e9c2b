package fakeslack_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
)

func newAPI(s *fakeslack.Server, token string) *slack.Client {
	return slack.New(token, slack.OptionAPIURL(s.APIURL()))
}

func TestWebAPIMessageLifecycle(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	api := newAPI(s, "xoxb-test")
	ctx := testCtx(t)

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.UserID != "UBOT" || auth.BotID != "BBOT" || auth.TeamID != "T1" {
		t.Fatalf("auth.test = %+v, %v", auth, err)
	}
	ch, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("root <@U1>", false))
	if err != nil || ch != "C1" || root == "" {
		t.Fatalf("post = %q %q %v", ch, root, err)
	}
	_, reply, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionText("checklist", false))
	if err != nil || reply <= root {
		t.Fatalf("reply ts %q after %q: %v", reply, root, err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", reply, slack.MsgOptionText("checklist 1/2 tasks", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "✔ a\n○ b", false, false), nil, nil))); err != nil {
		t.Fatal(err)
	}
	m, found := s.Message("C1", reply)
	if !found || m.Text != "checklist 1/2 tasks" || m.Updates != 1 || m.ThreadTS != root || !strings.Contains(string(m.Blocks), "✔ a") {
		t.Errorf("updated message = %+v", m)
	}
	if err := api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", root)); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage("C1", root)); err == nil || err.Error() != "already_reacted" {
		t.Errorf("second reaction: %v", err)
	}
	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: "C1", Ts: root})
	if err != nil || link != fakeslack.Permalink("C1", root, "") || !strings.HasPrefix(link, "https://fake.slack/archives/C1/p") {
		t.Errorf("permalink = %q, %v", link, err)
	}
	msgs, more, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root})
	if err != nil || more || len(msgs) != 2 || msgs[1].Text != "checklist 1/2 tasks" || msgs[0].ReplyCount != 1 {
		t.Errorf("replies = %+v more=%v err=%v", msgs, more, err)
	}
	checkOtherCalls(t, s, api, root, reply)
}

// checkOtherCalls: ephemerals, delete, conversations.info, users.info and
// the call log, after TestWebAPIMessageLifecycle's posts.
func checkOtherCalls(t *testing.T, s *fakeslack.Server, api *slack.Client, root, reply string) {
	ctx := testCtx(t)
	if _, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionText("only you", false)); err != nil {
		t.Fatal(err)
	}
	if e := s.Ephemerals("C1", "U1"); len(e) != 1 || !e[0].Ephemeral || e[0].EphemeralUser != "U1" {
		t.Errorf("ephemerals = %+v", e)
	}
	if _, _, err := api.DeleteMessageContext(ctx, "C1", reply); err != nil {
		t.Fatal(err)
	}
	if got := s.Messages("C1"); len(got) != 1 || got[0].TS != root || got[0].Reactions[0] != "eyes" {
		t.Errorf("messages = %+v", got)
	}
	info, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: "C1"})
	if err != nil || info.ID != "C1" {
		t.Errorf("conversations.info = %+v, %v", info, err)
	}
	s.AddUser("U1", "alice")
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || u.Name != "alice" {
		t.Errorf("users.info = %+v, %v", u, err)
	}
	if calls := s.Calls("chat.update"); len(calls) != 1 || calls[0].Params["ts"] != reply || calls[0].Token != "xoxb-test" {
		t.Errorf("calls = %+v", calls)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations = %q", v)
	}
}

func TestAuthErrors(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	ctx := testCtx(t)
	for _, tc := range []struct{ token, want string }{
		{"", "not_authed"}, {"xoxb-wrong", "invalid_auth"}, {"xapp-test", "not_allowed_token_type"},
	} {
		_, _, err := newAPI(s, tc.token).PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
		if err == nil || err.Error() != tc.want {
			t.Errorf("token %q: err %v, want %s", tc.token, err, tc.want)
		}
	}
	// JSON with a Bearer token works too, and unknown methods answer unknown_method.
	for method, want := range map[string]string{"chat.postMessage": "", "no.such": "unknown_method"} {
		req, _ := http.NewRequest("POST", s.APIURL()+method, strings.NewReader(`{"channel":"C1","text":"json","blocks":[]}`))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer xoxb-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if body.Error != want || body.OK != (want == "") {
			t.Errorf("%s: %+v", method, body)
		}
	}
	if got := s.Messages("C1"); len(got) != 1 || got[0].Text != "json" {
		t.Errorf("messages = %+v", got)
	}
}

func TestRateLimitAndFailNext(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	api := newAPI(s, "xoxb-test")
	ctx := testCtx(t)
	s.RateLimit("chat.update", 2, 1500*time.Millisecond)
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, _, _, err = api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("y", false))
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
			t.Fatalf("err = %#v, want RateLimitedError 2s", err)
		}
	}
	if _, _, _, err = api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("y", false)); err != nil {
		t.Fatal(err)
	}
	calls := s.Calls("chat.update")
	if len(calls) != 3 || calls[0].Status != http.StatusTooManyRequests || calls[0].SlackError != "ratelimited" || calls[2].Status != 200 {
		t.Errorf("calls = %+v", calls)
	}

	s.FailNext("chat.postMessage", "channel_not_found")
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err == nil || err.Error() != "channel_not_found" {
		t.Errorf("FailNext: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("after FailNext: %v", err)
	}
}

func TestConnectionsOpenNeedsAppToken(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	resp, err := http.PostForm(s.APIURL()+"apps.connections.open", url.Values{"token": {"xoxb-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if body.Error != "not_allowed_token_type" {
		t.Errorf("error = %q", body.Error)
	}
}

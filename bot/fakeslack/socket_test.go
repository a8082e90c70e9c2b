package fakeslack_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/h9-app/h9/bot/fakeslack"
)

func TestSlashCommandAckAndResponseURL(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, func(evt socketmode.Event) any {
		if cmd, ok := evt.Data.(slack.SlashCommand); ok {
			return map[string]any{"text": "working on " + cmd.Text}
		}
		return nil
	})
	ctx := testCtx(t)
	ack, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "plan add tests", UserID: "U7", ChannelID: "C9"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack.Payload), "working on plan add tests") {
		t.Errorf("ack payload = %s", ack.Payload)
	}
	evt := a.next(t)
	cmd := evt.Data.(slack.SlashCommand)
	if cmd.Command != "/h9" || cmd.Text != "plan add tests" || cmd.UserID != "U7" || cmd.ChannelID != "C9" ||
		cmd.TeamID != "T1" || cmd.ResponseURL == "" || cmd.TriggerID == "" || !evt.Request.AcceptsResponsePayload {
		t.Errorf("slash command = %+v", cmd)
	}
	if eph := s.Ephemerals("C9", "U7"); len(eph) != 1 || eph[0].Text != "working on plan add tests" {
		t.Errorf("ephemerals = %+v", eph)
	}

	// A later in_channel answer through response_url is a visible bot message.
	_, _, err = a.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel),
		slack.MsgOptionText("done", false))
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages("C9")
	if len(msgs) != 1 || msgs[0].Text != "done" || msgs[0].BotID != "BBOT" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestEventsMentionAndDuplicates(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, nil)
	ctx := testCtx(t)

	root, err := s.PostUserMessage(ctx, "U1", "C1", "", "hello")
	if err != nil {
		t.Fatal(err)
	}
	ev := a.next(t).Data.(slackevents.EventsAPIEvent)
	msg, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || msg.TimeStamp != root || msg.Text != "hello" || msg.User != "U1" || msg.Channel != "C1" ||
		msg.ThreadTimeStamp != "" || ev.TeamID != "T1" {
		t.Fatalf("message event = %+v", ev.InnerEvent.Data)
	}

	ts, err := s.Mention(ctx, "U1", "C1", root, "plan it")
	if err != nil {
		t.Fatal(err)
	}
	first := a.next(t).Data.(slackevents.EventsAPIEvent)
	mention, ok := first.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || mention.TimeStamp != ts || mention.Text != "<@UBOT> plan it" || mention.ThreadTimeStamp != root {
		t.Fatalf("app_mention = %+v", first.InnerEvent.Data)
	}
	second := a.next(t).Data.(slackevents.EventsAPIEvent)
	if m, ok := second.InnerEvent.Data.(*slackevents.MessageEvent); !ok || m.TimeStamp != ts || m.ThreadTimeStamp != root {
		t.Fatalf("second event = %+v", second.InnerEvent.Data)
	}
	if th := s.Thread("C1", root); len(th) != 2 || th[1].TS != ts {
		t.Errorf("thread = %+v", th)
	}

	// A raw event with a chosen event_id, then Slack's redelivery of the same envelope.
	ack, err := s.SendEvent(ctx, "EvDUP", map[string]any{"type": "app_mention", "user": "U1", "channel": "C1",
		"text": "<@UBOT> hi", "ts": "1700000001.000100", "event_ts": "1700000001.000100"})
	if err != nil {
		t.Fatal(err)
	}
	firstEvt := a.next(t)
	if _, err := s.Redeliver(ctx, ack.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	again := a.next(t)
	cb := func(e socketmode.Event) *slackevents.EventsAPICallbackEvent {
		return e.Data.(slackevents.EventsAPIEvent).Data.(*slackevents.EventsAPICallbackEvent)
	}
	if cb(firstEvt).EventID != "EvDUP" || cb(again).EventID != "EvDUP" || again.Request.RetryAttempt != 1 ||
		again.Request.EnvelopeID != ack.EnvelopeID || firstEvt.Request.RetryAttempt != 0 {
		t.Errorf("redelivery: first %+v again %+v", firstEvt.Request, again.Request)
	}
}

func TestEchoBotMessages(t *testing.T) {
	s := newServer(t, fakeslack.Options{EchoBotMessages: true})
	a := startApp(t, s, nil)
	ctx := testCtx(t)
	_, ts, err := a.api.PostMessageContext(ctx, "C1", slack.MsgOptionText("mine", false))
	if err != nil {
		t.Fatal(err)
	}
	ev := a.next(t).Data.(slackevents.EventsAPIEvent)
	m, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || m.BotID != "BBOT" || m.TimeStamp != ts || m.User != "UBOT" {
		t.Errorf("echo = %+v", ev.InnerEvent.Data)
	}
}

func TestClickButtonAndReplaceOriginal(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, nil)
	ctx := testCtx(t)
	root, err := s.PostUserMessage(ctx, "U1", "C1", "", "task")
	if err != nil {
		t.Fatal(err)
	}
	a.next(t)
	approve := slack.NewButtonBlockElement("approve", "sess-1", slack.NewTextBlockObject("plain_text", "Approve & auto-run", false, false))
	cancel := slack.NewButtonBlockElement("cancel", "sess-1", slack.NewTextBlockObject("plain_text", "Cancel", false, false))
	_, ts, err := a.api.PostMessageContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionText("review", false),
		slack.MsgOptionBlocks(
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "*Plan ready*", false, false), nil, nil),
			slack.NewActionBlock("review-1", approve, cancel)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClickButton(ctx, "U2", "C1", ts, "cancel"); err != nil {
		t.Fatal(err)
	}
	cb := a.next(t).Data.(slack.InteractionCallback)
	acts := cb.ActionCallback.BlockActions
	if cb.Type != slack.InteractionTypeBlockActions || len(acts) != 1 || acts[0].ActionID != "cancel" ||
		acts[0].BlockID != "review-1" || acts[0].Value != "sess-1" || acts[0].Text.Text != "Cancel" ||
		cb.User.ID != "U2" || cb.Channel.ID != "C1" || cb.Container.MessageTs != ts || cb.Container.ThreadTs != root ||
		cb.Message.Timestamp != ts || cb.Message.ThreadTimestamp != root || len(cb.Message.Blocks.BlockSet) != 2 ||
		cb.ResponseURL == "" || cb.TriggerID == "" {
		t.Errorf("callback = %+v", cb)
	}
	if _, err := s.ClickButton(ctx, "U2", "C1", ts, "nope"); err == nil {
		t.Error("clicking a missing button succeeded")
	}
	_, _, err = a.api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("cancelled", false))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message("C1", ts); m.Text != "cancelled" || m.Updates != 1 || m.Blocks != nil {
		t.Errorf("after replace_original: %+v", m)
	}
}

func TestDisconnectAndDropReconnect(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, nil)
	ctx := testCtx(t)
	for i, fault := range []func(){s.SendDisconnect, s.DropConnection} {
		fault()
		if _, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "status"}); err != nil {
			t.Fatalf("after fault %d: %v", i, err)
		}
		if cmd := a.next(t).Data.(slack.SlashCommand); cmd.Text != "status" {
			t.Errorf("got %+v", cmd)
		}
		if got := s.ConnectionCount(); got != i+2 {
			t.Errorf("connections after fault %d = %d", i, got)
		}
	}
	if n := len(s.Calls("apps.connections.open")); n != 3 {
		t.Errorf("apps.connections.open called %d times", n)
	}
}

// A raw websocket client sees Slack's hello, then PINGs; a ticket works once.
func TestHelloPingAndTicket(t *testing.T) {
	s := newServer(t, fakeslack.Options{PingInterval: 20 * time.Millisecond})
	wsURL := socketURL(t, s)
	c, _, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pinged := make(chan struct{}, 1)
	c.SetPingHandler(func(string) error {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return nil
	})
	var hello socketmode.Request
	if err := c.ReadJSON(&hello); err != nil {
		t.Fatal(err)
	}
	if hello.Type != "hello" || hello.NumConnections != 1 || hello.ConnectionInfo.AppID != "A1" || hello.DebugInfo.Host == "" {
		t.Errorf("hello = %+v", hello)
	}
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case <-pinged:
	case <-time.After(20 * time.Second):
		t.Error("no PING")
	}
	if _, resp, err := websocket.DefaultDialer.Dial(wsURL, nil); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of a ticket: err %v", err)
	}
}

func TestEchoEdits(t *testing.T) {
	s := newServer(t, fakeslack.Options{EchoEdits: true})
	a := startApp(t, s, nil)
	ctx := testCtx(t)
	_, ts, err := a.api.PostMessageContext(ctx, "C1", slack.MsgOptionText("v1", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := a.api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("v2", false)); err != nil {
		t.Fatal(err)
	}
	ev := a.next(t).Data.(slackevents.EventsAPIEvent)
	m, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || m.SubType != "message_changed" || m.BotID != "" || m.Message == nil || m.Message.Text != "v2" ||
		m.Message.BotID != "BBOT" || m.PreviousMessage == nil || m.PreviousMessage.Text != "v1" {
		t.Errorf("message_changed = %+v", ev.InnerEvent.Data)
	}
}

func TestAckPayloadAndResponseURLLimits(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, func(evt socketmode.Event) any {
		return map[string]any{"blocks": []any{map[string]any{"type": "header",
			"text": map[string]any{"type": "plain_text", "text": strings.Repeat("h", 151)}}}}
	})
	ctx := testCtx(t)
	if _, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "help"}); err != nil {
		t.Fatal(err)
	}
	cmd := a.next(t).Data.(slack.SlashCommand)
	if v := s.Violations(); len(v) != 1 || !strings.HasPrefix(v[0], "slash command ack C1: ") {
		t.Errorf("violations = %q", v)
	}
	if e := s.Ephemerals("C1", ""); len(e) != 0 {
		t.Errorf("an invalid ack payload was shown: %+v", e)
	}
	for i := range 6 {
		_, _, err := a.api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral),
			slack.MsgOptionText("progress", false))
		if (err != nil) != (i == 5) {
			t.Errorf("use %d of the response_url: %v", i+1, err)
		}
	}
	if e := s.Ephemerals("C1", "U1"); len(e) != 5 {
		t.Errorf("%d ephemerals, want 5", len(e))
	}
	if v := s.Violations(); len(v) != 2 || !strings.Contains(v[1], "used 6 times") {
		t.Errorf("violations = %q", v)
	}
}

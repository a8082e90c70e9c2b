package fakeslack_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/h9-app/h9/bot/fakeslack"
)

// slackCode is the error code of Slack's ok:false answer in err.
func slackCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// postRoot posts a bot message in C1 for a session to thread under.
func postRoot(t *testing.T, api *slack.Client) string {
	t.Helper()
	_, root, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionText("root", false))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// A thread's session as slack-go's own calls make it: created by the first
// setStatus with its title and initiator (later ones are ignored, as Slack
// documents), each call in the history with the replica that made it,
// renamed by agents.sessions.rename.
func TestAgentSessionStatusAndRename(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	api, ctx := newAPI(s, "xoxb-test"), testCtx(t)
	replica := slack.New("xoxb-test", slack.OptionAPIURL(s.APIURLFor("r2")))
	root := postRoot(t, api)
	_, reply, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionText("checklist", false))
	if err != nil {
		t.Fatal(err)
	}

	resp, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: slack.AgentSessionStatusProcessing,
		ChannelID: "C1", ThreadTS: root, Title: "add a README", InitiatorUserID: "U1"})
	if err != nil || resp.Status != "processing" || resp.AgentStatus != "processing" || resp.Title != "add a README" {
		t.Fatalf("setStatus = %+v, %v", resp, err)
	}
	// A reply's ts names its thread; title and initiator count only on creation.
	if _, err := replica.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "suspended",
		ChannelID: "C1", ThreadTS: reply, Title: "another", InitiatorUserID: "U2"}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"suspended", "active", "closed"} {
		if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: st, ChannelID: "C1", ThreadTS: root}); err != nil {
			t.Fatal(err)
		}
	}
	a, found := s.AgentSession("C1", root)
	if !found || a.Title != "add a README" || a.Initiator != "U1" || a.Status != "closed" || a.ThreadTS != root || len(a.History) != 5 {
		t.Fatalf("session = %+v", a)
	}
	if h := a.History[1]; h.Replica != "r2" || h.Method != "agents.sessions.setStatus" || a.History[0].Replica != "" {
		t.Errorf("history = %+v: want the second call from r2", a.History)
	}
	if got, want := s.StatusSequence("C1", reply), []string{"processing", "suspended", "active", "closed"}; !slices.Equal(got, want) {
		t.Errorf("status sequence = %q, want %q (setting the same status twice shows once)", got, want)
	}

	renamed, err := api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{Title: "write the README", ChannelID: "C1", ThreadTS: root})
	if err != nil || renamed.Title != "write the README" {
		t.Fatalf("rename = %+v, %v", renamed, err)
	}
	if a, _ := s.AgentSession("C1", root); a.Title != "write the README" || a.Renames != 1 {
		t.Errorf("after rename = %+v", a)
	}
	if s.StatusSequence("C1", "1.000001") != nil {
		t.Error("a thread without a session has a status sequence")
	}
}

// Each way Slack refuses agents.sessions.* arguments, with its documented code.
func TestAgentSessionErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	api, ctx := newAPI(s, "xoxb-test"), testCtx(t)
	root := postRoot(t, api)
	set := func(p slack.AgentSessionSetStatusParameters) error {
		_, err := api.SetAgentSessionStatusContext(ctx, p)
		return err
	}
	for _, tc := range []struct {
		name string
		p    slack.AgentSessionSetStatusParameters
		want string
	}{
		{"unknown status", slack.AgentSessionSetStatusParameters{Status: "busy", ChannelID: "C1", ThreadTS: root}, "invalid_status"},
		{"no thread", slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C1"}, "thread_ts_required"},
		{"no channel", slack.AgentSessionSetStatusParameters{Status: "active", ThreadTS: root}, "channel_not_found"},
		{"bad initiator", slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C1", ThreadTS: root, InitiatorUserID: "X1"}, "user_not_found"},
		{"title too long", slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C1", ThreadTS: root, Title: strings.Repeat("t", 201)}, "invalid_arguments"},
	} {
		if err := set(tc.p); slackCode(err) != tc.want {
			t.Errorf("%s: err %v, want %s", tc.name, err, tc.want)
		}
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], "title is 201 characters") {
		t.Errorf("violations = %q, want the long title", v)
	}
	if _, found := s.AgentSession("C1", root); found {
		t.Error("a refused setStatus made a session")
	}
	if _, err := api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{Title: "x", ChannelID: "C1", ThreadTS: root}); slackCode(err) != "session_not_found" {
		t.Errorf("rename without a session: %v", err)
	}
	if _, err := api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{Title: "", ChannelID: "C1", ThreadTS: root}); slackCode(err) != "invalid_arguments" {
		t.Errorf("rename to an empty title: %v", err)
	}
	if _, err := newAPI(s, "xoxb-wrong").SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "active", ChannelID: "C1", ThreadTS: root}); slackCode(err) != "invalid_auth" {
		t.Errorf("a wrong token: %v", err)
	}
}

// Refuse answers every call of a method with the code Slack refuses an app
// with, missing_scope naming the scopes, until lifted.
func TestRefuseSurfaceMethods(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	api, ctx := newAPI(s, "xoxb-test"), testCtx(t)
	root := postRoot(t, api)
	calls := map[string]func() error{
		"agents.sessions.setStatus": func() error {
			_, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root})
			return err
		},
		"agents.sessions.rename": func() error {
			_, err := api.RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{Title: "t", ChannelID: "C1", ThreadTS: root})
			return err
		},
		"chat.startStream": func() error {
			_, _, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID("T1"))
			return err
		},
		"chat.appendStream": func() error {
			_, _, err := api.AppendStreamContext(ctx, "C1", root, slack.MsgOptionMarkdownText("x"))
			return err
		},
		"chat.stopStream": func() error {
			_, _, err := api.StopStreamContext(ctx, "C1", root)
			return err
		},
	}
	for method, call := range calls {
		for _, code := range []string{"not_authorized", "missing_scope", "unknown_method", "channel_type_not_supported"} {
			s.Refuse(method, code)
			for range 2 { // every call, not only the next
				err := call()
				var se slack.SlackErrorResponse
				if !errors.As(err, &se) || se.Err != code {
					t.Fatalf("%s refused with %s: err %v", method, code, err)
				}
				if code == "missing_scope" && (se.Needed == "" || strings.Contains(se.Provided, se.Needed) || se.Provided == "") {
					t.Errorf("%s missing_scope: needed %q, provided %q", method, se.Needed, se.Provided)
				}
			}
		}
		s.Refuse(method, "")
	}
	if err := calls["agents.sessions.setStatus"](); err != nil {
		t.Errorf("after the refusal was lifted: %v", err)
	}
	if n := s.CallCounts()["chat.startStream"]; n != 8 {
		t.Errorf("chat.startStream calls = %d, want 8", n)
	}
}

// The Stop button: Slack halts the thread's open streams, leaves the status
// as it was, and sends agent_session_stopped as slack-go parses it.
func TestPressStopSendsAgentSessionStopped(t *testing.T) {
	t.Parallel()
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, nil)
	ctx := testCtx(t)
	root := postRoot(t, a.api)
	if _, err := s.PressStop(ctx, "U2", "C1", root); !errors.Is(err, fakeslack.ErrNoStopButton) {
		t.Fatalf("Stop without a session: %v, want ErrNoStopButton", err)
	}
	if _, err := a.api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: "processing", ChannelID: "C1", ThreadTS: root}); err != nil {
		t.Fatal(err)
	}
	_, ts, err := a.api.StartStreamContext(ctx, "C1", slack.MsgOptionTS(root), slack.MsgOptionRecipientUserID("U1"),
		slack.MsgOptionRecipientTeamID("T1"), slack.MsgOptionMarkdownText("Looking"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PressStop(ctx, "U2", "C1", root); err != nil {
		t.Fatal(err)
	}
	ev := a.next(t).Data.(slackevents.EventsAPIEvent)
	stopped, ok := ev.InnerEvent.Data.(*slackevents.AgentSessionStoppedEvent)
	if !ok || ev.InnerEvent.Type != "agent_session_stopped" || ev.TeamID != "T1" {
		t.Fatalf("event = %+v", ev)
	}
	if stopped.User != "U2" || stopped.Channel != "C1" || stopped.ThreadTimestamp != root ||
		!slices.Equal(stopped.StreamingMessageTimestamps, []string{ts}) || stopped.EventTimestamp == "" {
		t.Errorf("agent_session_stopped = %+v", stopped)
	}
	m, _ := s.Message("C1", ts)
	if s.StreamOpen("C1", ts) || m.StreamHaltedBy != "U2" || m.Text != "Looking" {
		t.Errorf("the halted stream = %+v", m)
	}
	if _, _, err := a.api.AppendStreamContext(ctx, "C1", ts, slack.MsgOptionMarkdownText("more")); slackCode(err) != "message_not_in_streaming_state" {
		t.Errorf("append after Stop: %v", err)
	}
	if seq := s.StatusSequence("C1", root); !slices.Equal(seq, []string{"processing"}) {
		t.Errorf("status after Stop = %q: Slack leaves it to the app", seq)
	}

	// With no stream open the list is empty, not absent.
	if _, err := s.PressStop(ctx, "U1", "C1", root); err != nil {
		t.Fatal(err)
	}
	again := a.next(t).Data.(slackevents.EventsAPIEvent).InnerEvent.Data.(*slackevents.AgentSessionStoppedEvent)
	if again.StreamingMessageTimestamps == nil || len(again.StreamingMessageTimestamps) != 0 || again.User != "U1" {
		t.Errorf("second Stop = %+v", again)
	}
}

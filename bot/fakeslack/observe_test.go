package fakeslack_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/h9-app/h9/bot/fakeslack"
)

// dialRaw connects a bare websocket client that reads frames but never acks.
func dialRaw(t *testing.T, s *fakeslack.Server) {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(socketURL(t, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}()
}

func TestUnacked(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	dialRaw(t, s)
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	_, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "plan"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if u := s.Unacked(); len(u) != 1 {
		t.Errorf("unacked = %q", u)
	}
}

func TestReceivedHasNoTokens(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	a := startApp(t, s, func(socketmode.Event) any { return map[string]any{"text": "ack text"} })
	ctx := testCtx(t)
	if _, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "help"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.api.PostMessageContext(ctx, "C1", slack.MsgOptionText("posted", false)); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(s.Received(), "\n")
	if strings.Contains(all, "xoxb-test") || strings.Contains(all, "xapp-test") {
		t.Errorf("Received shows a token:\n%s", all)
	}
	if !strings.Contains(all, "ack text") || !strings.Contains(all, "text=posted") {
		t.Errorf("Received misses payloads:\n%s", all)
	}
	if u := s.Unacked(); len(u) != 0 {
		t.Errorf("unacked = %q", u)
	}
}

// BenchmarkSlashCommandAck measures the fake's own round trip with an app that acks at once.
func BenchmarkSlashCommandAck(b *testing.B) {
	s := fakeslack.New(fakeslack.Options{})
	defer s.Close()
	api := slack.New("xoxb-test", slack.OptionAppLevelToken("xapp-test"), slack.OptionAPIURL(s.APIURL()))
	sm := socketmode.New(api)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = sm.RunContext(ctx) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-sm.Events:
				if evt.Request != nil && evt.Type != socketmode.EventTypeHello {
					_ = sm.Ack(*evt.Request)
				}
			}
		}
	}()
	if err := s.WaitConnected(ctx); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		ack, err := s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "status"})
		if err != nil {
			b.Fatal(err)
		}
		total += ack.Latency
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "ack-µs/op")
}

func TestConcurrentEnvelopes(t *testing.T) {
	s := newServer(t, fakeslack.Options{})
	startApp(t, s, nil)
	ctx := testCtx(t)
	errs := make(chan error, 200)
	for i := range 200 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = s.SlashCommand(ctx, fakeslack.SlashCommand{Text: "status"})
			} else {
				_, err = s.PostUserMessage(ctx, "U1", "C1", "", "hi")
			}
			errs <- err
		}()
	}
	for range 200 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if u := s.Unacked(); len(u) != 0 {
		t.Errorf("unacked = %q", u)
	}
	if n := len(s.Messages("C1")); n != 100 {
		t.Errorf("%d messages", n)
	}
}

package fakeslack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/h9-app/h9/bot/fakeslack"
)

// app is a real slack-go Socket Mode client connected to a fake Slack. Every request it gets is
// acked with whatever ackWith returns (nil = empty ack) and then handed to the test on got.
type app struct {
	api *slack.Client
	sm  *socketmode.Client
	got chan socketmode.Event
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newServer(t *testing.T, opts fakeslack.Options) *fakeslack.Server {
	t.Helper()
	opts.Logf = t.Logf
	s := fakeslack.New(opts)
	t.Cleanup(s.Close)
	return s
}

func startApp(t *testing.T, s *fakeslack.Server, ackWith func(socketmode.Event) any, smOpts ...socketmode.Option) *app {
	t.Helper()
	return startAppAt(t, s, s.APIURL(), ackWith, smOpts...)
}

// startAppAt is startApp with the Web API at apiURL (a replica's, APIURLFor).
func startAppAt(t *testing.T, s *fakeslack.Server, apiURL string, ackWith func(socketmode.Event) any, smOpts ...socketmode.Option) *app {
	t.Helper()
	o := s.Options()
	api := slack.New(o.BotToken, slack.OptionAppLevelToken(o.AppToken), slack.OptionAPIURL(apiURL))
	a := &app{api: api, sm: socketmode.New(api, smOpts...), got: make(chan socketmode.Event, 1000)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.sm.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-a.sm.Events:
				if evt.Request == nil || evt.Type == socketmode.EventTypeHello {
					continue
				}
				var payload any
				if ackWith != nil {
					payload = ackWith(evt)
				}
				if err := a.sm.AckCtx(ctx, evt.Request.EnvelopeID, payload); err != nil {
					t.Errorf("ack: %v", err)
				}
				select {
				case a.got <- evt:
				default: // a test that does not read got must not stall the acks
				}
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	if err := s.WaitConnected(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return a
}

// next returns the next request the app received.
func (a *app) next(t *testing.T) socketmode.Event {
	t.Helper()
	select {
	case evt := <-a.got:
		return evt
	case <-time.After(20 * time.Second):
		t.Fatal("the app received nothing")
		return socketmode.Event{}
	}
}

// socketURL asks apps.connections.open, as a client would, for a Socket Mode URL.
func socketURL(t *testing.T, s *fakeslack.Server) string {
	t.Helper()
	return socketURLAt(t, s.APIURL())
}

// socketURLAt is socketURL through the Web API at apiURL.
func socketURLAt(t *testing.T, apiURL string) string {
	t.Helper()
	resp, err := http.PostForm(apiURL+"apps.connections.open", url.Values{"token": {"xapp-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var open struct {
		OK  bool   `json:"ok"`
		URL string `json:"url"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&open); err != nil || !open.OK {
		t.Fatalf("apps.connections.open: ok=%t, err %v", open.OK, err)
	}
	return open.URL
}

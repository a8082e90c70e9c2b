package slackapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/fakeslack"
	"github.com/h9-app/h9/bot/render"
)

// offCounter counts the surfaces turned off, as cmd/h9's metrics do.
type offCounter struct {
	noMetrics
	mu  sync.Mutex
	off []string
}

func (c *offCounter) SlackSurfaceOff(surface, code string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = append(c.off, surface+":"+code)
}

func surfaceClient(t *testing.T) (*fakeslack.Server, *Client, *offCounter) {
	t.Helper()
	fs := fakeslack.New(fakeslack.Options{})
	t.Cleanup(fs.Close)
	m := &offCounter{}
	return fs, New("xoxb-test", "xapp-test", fs.APIURL(), slog.New(slog.DiscardHandler), m), m
}

// rootPost starts a thread in C1.
func rootPost(t *testing.T, api *Client) string {
	t.Helper()
	ts, err := api.PostMessage(context.Background(), slog.New(slog.DiscardHandler), "C1", "", render.Message{Text: "root"})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// A thread's status, then a stream started, grown and stopped, as Slack holds them.
func TestSurfacesOn(t *testing.T) {
	t.Parallel()
	fs, api, _ := surfaceClient(t)
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	root := rootPost(t, api)
	for _, st := range []string{slack.AgentSessionStatusProcessing, slack.AgentSessionStatusSuspended} {
		if err := api.SetStatus(ctx, log, SessionStatus{Channel: "C1", ThreadTS: root, Status: st, Title: "the task", Initiator: "U1"}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := fs.AgentSession("C1", root)
	if a.Title != "the task" || a.Initiator != "U1" || a.Status != fakeslack.StatusSuspended {
		t.Errorf("session = %+v", a)
	}
	ts, err := api.StartStream(ctx, log, "C1", root, "U1", "T1", "Hel")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.AppendStream(ctx, log, "C1", ts, "lo, world"); err != nil {
		t.Fatal(err)
	}
	if err := api.StopStream(ctx, log, "C1", ts, slack.AgentSessionStatusSuspended, ""); err != nil {
		t.Fatal(err)
	}
	m, _ := fs.Message("C1", ts)
	if m.Text != "Hello, world" || m.Streaming || m.RecipientUser != "U1" || m.RecipientTeam != "T1" || m.ThreadTS != root {
		t.Errorf("streamed message = %+v", m)
	}
	if a, _ := fs.AgentSession("C1", root); a.Status != fakeslack.StatusSuspended {
		t.Errorf("status after stopStream with suspended: %s", a.Status)
	}
	if !api.SurfaceOn(SurfaceStatus) || !api.SurfaceOn(SurfaceStream) {
		t.Error("a surface Slack answered is off")
	}
}

// Each refusal turns its surface off for good: one call reaches Slack,
// the rest answer ErrSurfaceOff unsent; the other surface stays on; the
// metric hears it once.
func TestSurfaceRefusalTurnsItOff(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"not_authorized", "missing_scope", "unknown_method"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			fs, api, m := surfaceClient(t)
			ctx, log := context.Background(), slog.New(slog.DiscardHandler)
			root := rootPost(t, api)
			fs.Refuse("agents.sessions.setStatus", code)
			for range 3 {
				err := api.SetStatus(ctx, log, SessionStatus{Channel: "C1", ThreadTS: root, Status: "processing"})
				if !errors.Is(err, ErrSurfaceOff) {
					t.Fatalf("err = %v, want ErrSurfaceOff", err)
				}
			}
			if n := len(fs.Calls("agents.sessions.setStatus")); n != 1 {
				t.Errorf("%d setStatus calls reached Slack, want 1", n)
			}
			if api.SurfaceOn(SurfaceStatus) || !api.SurfaceOn(SurfaceStream) {
				t.Errorf("surfaces = %v, want status off and stream on", api.SurfacesInUse())
			}
			if _, err := api.StartStream(ctx, log, "C1", root, "U1", "T1", "x"); err != nil {
				t.Errorf("stream after status refused: %v", err)
			}
			if want := []string{"status:" + code}; !slices.Equal(m.off, want) {
				t.Errorf("metric heard %v, want %v", m.off, want)
			}
		})
	}
}

// A channel Slack will not stream in turns streaming off; an ordinary
// failure (a stream already stopped) does not.
func TestStreamChannelTypeRefused(t *testing.T) {
	t.Parallel()
	fs, api, _ := surfaceClient(t)
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	root := rootPost(t, api)
	ts, err := api.StartStream(ctx, log, "C1", root, "U1", "T1", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.StopStream(ctx, log, "C1", ts, "", ""); err != nil {
		t.Fatal(err)
	}
	err = api.AppendStream(ctx, log, "C1", ts, "late")
	if ErrorCode(err) != "message_not_in_streaming_state" || errors.Is(err, ErrSurfaceOff) {
		t.Errorf("append to a stopped stream: %v", err)
	}
	fs.CannotStream("C1")
	if _, err := api.StartStream(ctx, log, "C1", root, "U1", "T1", "b"); !errors.Is(err, ErrSurfaceOff) {
		t.Fatalf("err = %v, want ErrSurfaceOff", err)
	}
	if api.SurfaceOn(SurfaceStream) {
		t.Error("stream still on after channel_type_not_supported")
	}
	if got := api.SurfacesInUse()[SurfaceStream]; got != "channel_type_not_supported" {
		t.Errorf("SurfacesInUse()[stream] = %q", got)
	}
}

// The probe doctor runs: in use unless Slack refuses.
func TestProbeSurfaces(t *testing.T) {
	t.Parallel()
	fs, _, _ := surfaceClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	api := slack.New("xoxb-test", slack.OptionAPIURL(fs.APIURL()))
	got, err := ProbeSurfaces(ctx, api)
	if err != nil || got[SurfaceStatus] != "" || got[SurfaceStream] != "" {
		t.Fatalf("probe = %v, %v; want both in use", got, err)
	}
	fs.Refuse("agents.sessions.setStatus", "missing_scope")
	fs.Refuse("chat.appendStream", "unknown_method")
	got, err = ProbeSurfaces(ctx, api)
	if err != nil || got[SurfaceStatus] != "missing_scope" || got[SurfaceStream] != "unknown_method" {
		t.Fatalf("probe = %v, %v; want both refused", got, err)
	}
}

// lockedLog is a log's text, written from many goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Many sessions call a refused method at once, through a Slack that takes
// a while to answer: the method reaches Slack once, is logged once and
// counted once; every caller hears ErrSurfaceOff.
func TestSurfaceRefusedOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	calls := map[string]func(api *Client, log *slog.Logger, root string) error{
		"agents.sessions.setStatus": func(api *Client, log *slog.Logger, root string) error {
			return api.SetStatus(context.Background(), log, SessionStatus{Channel: "C1", ThreadTS: root, Status: "processing", Title: "t", Initiator: "U1"})
		},
		"chat.startStream": func(api *Client, log *slog.Logger, root string) error {
			_, err := api.StartStream(context.Background(), log, "C1", root, "U1", "T1", "hello")
			return err
		},
	}
	for method, call := range calls {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			fs := fakeslack.New(fakeslack.Options{})
			t.Cleanup(fs.Close)
			target, err := url.Parse(fs.APIURL())
			if err != nil {
				t.Fatal(err)
			}
			proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(30 * time.Millisecond) // Slack's round trip: the window concurrent first calls meet in
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(slow.Close)
			m := &offCounter{}
			var out lockedLog
			log := slog.New(slog.NewTextHandler(&out, nil))
			api := New("xoxb-test", "xapp-test", slow.URL+target.Path, log, m)
			root := rootPost(t, api)
			fs.Refuse(method, "not_authorized")

			const sessions = 32
			start := make(chan struct{})
			errs := make(chan error, sessions)
			var wg sync.WaitGroup
			for range sessions {
				wg.Go(func() {
					<-start
					errs <- call(api, log, root)
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if !errors.Is(err, ErrSurfaceOff) {
					t.Errorf("err = %v, want ErrSurfaceOff", err)
				}
			}
			if n := len(fs.Calls(method)); n != 1 {
				t.Errorf("%d calls of %s reached Slack from %d sessions at once, want 1", n, method, sessions)
			}
			if n := strings.Count(out.String(), "Slack refused an agent surface"); n != 1 {
				t.Errorf("the refusal was logged %d times, want once", n)
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if len(m.off) != 1 {
				t.Errorf("metric heard %v, want one surface off", m.off)
			}
		})
	}
}

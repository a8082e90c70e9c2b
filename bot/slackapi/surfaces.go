package slackapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/slack-go/slack"
)

// Slack's agent surfaces (ARCHITECTURE.md, "Slack's agent surfaces"): a
// session's status and title (agents.sessions.setStatus) and its text
// streamed as the model writes (chat.startStream, chat.appendStream,
// chat.stopStream). A workspace whose Slack refuses one of them for good
// (not_authorized, missing_scope, unknown_method, a channel type that
// cannot stream) falls back to what h9 did before, for the life of the
// process: the surface is turned off, logged once and counted, and every
// later call answers ErrSurfaceOff unsent.

// Surface is one of Slack's agent surfaces h9 uses.
type Surface string

const (
	// SurfaceStatus: agents.sessions.setStatus.
	SurfaceStatus Surface = "status"
	// SurfaceStream: chat.startStream, chat.appendStream, chat.stopStream.
	SurfaceStream Surface = "stream"
)

// Surfaces are every surface, in the order doctor names them.
var Surfaces = []Surface{SurfaceStatus, SurfaceStream}

// ErrSurfaceOff: the surface is off in this process (Slack refused it
// earlier, or now): the call was not made, or was refused; do what h9 does
// without it.
var ErrSurfaceOff = errors.New("this Slack surface is off: Slack refused it")

// SurfaceMetrics is what a Metrics may also hear: a surface turned off.
// Checked on the Metrics given to New; one without it counts nothing.
type SurfaceMetrics interface {
	// SlackSurfaceOff: Slack refused surface with code ("not_authorized",
	// …); it is off for the life of the process. Called once per surface.
	SlackSurfaceOff(surface, code string)
}

// refusalCodes are Slack's answers meaning "not for this app or this
// channel, whatever you retry".
var refusalCodes = map[string]bool{
	"not_authorized": true, "missing_scope": true, "unknown_method": true, "channel_type_not_supported": true,
	"not_allowed_token_type": true, "method_deprecated": true, "feature_not_enabled": true,
}

// Refused reports whether err is Slack refusing a method for good (one of
// refusalCodes), the answer that turns a surface off.
func Refused(err error) bool { return refusalCodes[ErrorCode(err)] }

// surfaceState is which surfaces are off, and why, and which methods
// Slack has taken.
type surfaceState struct {
	mu  sync.Mutex
	off map[Surface]string // surface → the code that turned it off
	// taken are the methods Slack answered without refusing: they are
	// called freely. A method not taken yet is tried by one caller at a
	// time (probing: closed when its answer came), so a refused method
	// reaches Slack once however many sessions call it at once.
	taken   map[string]bool
	probing map[string]chan struct{}
}

// admit waits until method of surface x may be called: nil and probe
// true when this caller is the one trying it first (it must call
// settle); ErrSurfaceOff when x went off; ctx's error when it ended
// while waiting.
func (st *surfaceState) admit(ctx context.Context, x Surface, method string) (probe bool, err error) {
	for {
		st.mu.Lock()
		if _, off := st.off[x]; off {
			st.mu.Unlock()
			return false, ErrSurfaceOff
		}
		if st.taken[method] {
			st.mu.Unlock()
			return false, nil
		}
		wait, busy := st.probing[method]
		if !busy {
			if st.probing == nil {
				st.probing, st.taken = map[string]chan struct{}{}, map[string]bool{}
			}
			st.probing[method] = make(chan struct{})
			st.mu.Unlock()
			return true, nil
		}
		st.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// settle ends the first try of method with its answer err: Slack
// answering anything but a refusal means the method is this app's; a
// failure to reach Slack leaves the next caller to try it.
func (st *surfaceState) settle(method string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err == nil || (ErrorCode(err) != "" && !Refused(err)) {
		st.taken[method] = true
	}
	close(st.probing[method])
	delete(st.probing, method)
}

// SurfaceOn reports whether the surface is still in use in this process.
func (s *Client) SurfaceOn(x Surface) bool {
	s.surfaces.mu.Lock()
	defer s.surfaces.mu.Unlock()
	_, off := s.surfaces.off[x]
	return !off
}

// SurfacesInUse lists every surface with whether it is on and, when off,
// Slack's code that turned it off.
func (s *Client) SurfacesInUse() map[Surface]string {
	s.surfaces.mu.Lock()
	defer s.surfaces.mu.Unlock()
	out := map[Surface]string{}
	for _, x := range Surfaces {
		out[x] = s.surfaces.off[x]
	}
	return out
}

// surfaceCall makes one call of surface x through Call, unless x is off;
// Slack's refusal turns x off (logged once, counted) and answers
// ErrSurfaceOff wrapping it. The first call of each method is made alone
// (admit): each refused method is tried at most once per process. A
// method Slack took and later refuses is turned off too, though calls
// already in flight may each hear the refusal.
func (s *Client) surfaceCall(ctx context.Context, log *slog.Logger, x Surface, method string, f func(context.Context) error) error {
	probe, err := s.surfaces.admit(ctx, x, method)
	if err != nil {
		return err
	}
	err = s.Call(ctx, log, method, f)
	if probe { // on return: once a refusal turned x off, its waiters answer ErrSurfaceOff unsent
		defer s.surfaces.settle(method, err)
	}
	if !Refused(err) {
		return err
	}
	code := ErrorCode(err)
	s.surfaces.mu.Lock()
	_, already := s.surfaces.off[x]
	if !already {
		if s.surfaces.off == nil {
			s.surfaces.off = map[Surface]string{}
		}
		s.surfaces.off[x] = code
	}
	s.surfaces.mu.Unlock()
	if !already {
		log.Warn("Slack refused an agent surface; h9 goes on without it until it restarts",
			"surface", string(x), "method", method, "error", code)
		if m, ok := s.metrics.(SurfaceMetrics); ok {
			m.SlackSurfaceOff(string(x), code)
		}
	}
	return fmt.Errorf("%w: %s answered %s: %w", ErrSurfaceOff, method, code, err)
}

// SessionStatus is what agents.sessions.setStatus is told: the status, and
// the title and initiator Slack takes when the call creates the session.
type SessionStatus struct {
	Channel, ThreadTS string
	Status            string // slack.AgentSessionStatus*
	Title, Initiator  string
}

// SetStatus sets the thread's agent session status (creating the session).
func (s *Client) SetStatus(ctx context.Context, log *slog.Logger, st SessionStatus) error {
	return s.surfaceCall(ctx, log, SurfaceStatus, "agents.sessions.setStatus", func(ctx context.Context) error {
		_, err := s.c.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
			Status: st.Status, ChannelID: st.Channel, ThreadTS: st.ThreadTS, Title: st.Title, InitiatorUserID: st.Initiator,
		})
		return err
	})
}

// StartStream starts a streamed reply in the thread for user of team,
// holding text so far; it returns the message's ts.
func (s *Client) StartStream(ctx context.Context, log *slog.Logger, channel, threadTS, user, team, text string) (string, error) {
	var ts string
	err := s.surfaceCall(ctx, log, SurfaceStream, "chat.startStream", func(ctx context.Context) error {
		opts := []slack.MsgOption{slack.MsgOptionTS(threadTS), slack.MsgOptionRecipientUserID(user), slack.MsgOptionRecipientTeamID(team)}
		if text != "" {
			opts = append(opts, slack.MsgOptionMarkdownText(text))
		}
		var err error
		_, ts, err = s.c.StartStreamContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// AppendStream adds text to the open stream at ts.
func (s *Client) AppendStream(ctx context.Context, log *slog.Logger, channel, ts, text string) error {
	return s.surfaceCall(ctx, log, SurfaceStream, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := s.c.AppendStreamContext(ctx, channel, ts, slack.MsgOptionMarkdownText(text))
		return err
	})
}

// StopStream ends the stream at ts; status, when set, is the session's
// status at that moment, which Slack otherwise resets to active; text,
// when set, is the stream's last piece (markdown_text). slack-go
// has no option for session_status, so the form is sent as its own.
func (s *Client) StopStream(ctx context.Context, log *slog.Logger, channel, ts, status, text string) error {
	return s.surfaceCall(ctx, log, SurfaceStream, "chat.stopStream", func(ctx context.Context) error {
		form := url.Values{"token": {s.token}, "channel": {channel}, "ts": {ts}}
		if status != "" {
			form.Set("session_status", status)
		}
		if text != "" {
			form.Set("markdown_text", text)
		}
		resp, err := s.postForm(ctx, s.apiURL+"chat.stopStream", form)
		if err == nil && !resp.OK && strings.TrimSpace(resp.Error) != "" {
			err = slack.SlackErrorResponse{Err: resp.Error, ResponseMetadata: resp.ResponseMetadata}
		}
		return err
	})
}

// Delete removes a message of the bot's (a stream whose text was voided).
func (s *Client) Delete(ctx context.Context, log *slog.Logger, channel, ts string) error {
	return s.Call(ctx, log, "chat.delete", func(ctx context.Context) error {
		_, _, err := s.c.DeleteMessageContext(ctx, channel, ts)
		return err
	})
}

// ProbeSurfaces asks Slack, with calls that change nothing (no channel),
// whether each surface's methods are this app's to use: an answer about
// the missing arguments means yes; a refusal (Refused) means no. It
// returns each surface's refusal code, "" when in use; err when Slack
// could not be asked.
func ProbeSurfaces(ctx context.Context, api *slack.Client) (map[Surface]string, error) {
	out := map[Surface]string{}
	_, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: slack.AgentSessionStatusActive})
	if perr := probeAnswer(err); perr != nil {
		return nil, perr
	}
	out[SurfaceStatus] = refusalOf(err)
	_, _, err = api.AppendStreamContext(ctx, "", "")
	if perr := probeAnswer(err); perr != nil {
		return nil, perr
	}
	out[SurfaceStream] = refusalOf(err)
	return out, nil
}

// probeAnswer keeps a probe's error only when it is not Slack's ok:false
// answer (the network, a rate limit): then Slack could not be asked.
func probeAnswer(err error) error {
	if err == nil || ErrorCode(err) != "" {
		return nil
	}
	return err
}

func refusalOf(err error) string {
	if Refused(err) {
		return ErrorCode(err)
	}
	return ""
}

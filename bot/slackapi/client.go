// Package slackapi is h9's Slack Web API client: every call honours 429
// Retry-After, retries what Slack refused for a passing reason, and logs
// ok:false errors with their context; a session's calls are refused once
// its lease is lost (lease.go).
package slackapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/netx"
	"github.com/slack-go/slack"
)

const (
	// maxRateLimitRetries bounds how often one call waits out a 429.
	maxRateLimitRetries = 5
	// maxRetryAfter caps one wait, so a bogus header cannot park a session.
	maxRetryAfter = 60 * time.Second
	// callTimeout bounds one Web API call including its 429 waits.
	callTimeout = 2 * time.Minute
	// MaxTransientRetries bounds retries of a call Slack refused for a
	// passing reason (internal_error, a 502/503/504), spaced by
	// transientBackoff, 2×transientBackoff, …
	MaxTransientRetries = 3
	transientBackoff    = 500 * time.Millisecond
)

// Client is the one door to the Web API: every call honours 429
// Retry-After and logs ok:false errors with their context.
type Client struct {
	c          *slack.Client
	http       *http.Client // slack-go's, for the calls chatSend makes itself
	token      string       // the bot token, for those calls
	log        *slog.Logger
	apiURL     string
	permalinks *linkCache
	// noPermalinks: the endpoint answered chat.getPermalink with
	// unknown_method; links are built instead of asked for.
	noPermalinks atomic.Bool
	metrics      Metrics
	surfaces     surfaceState // which agent surfaces Slack refused (surfaces.go)
	// Editing counts the checklists with an edit pending or in flight
	// (their flush goroutines), which spaces their edits past EditBudget
	// of them (bot's editSpacing). The bot sets EditBudget once, before
	// use; it keeps the count here, on the one client all sessions share.
	Editing    atomic.Int64
	EditBudget int64
}

// idleConns is how many idle keep-alive connections to Slack the bot
// keeps: under a burst of commands, dialling anew costs more CPU than the
// calls and delays the socket's acks.
const idleConns = 64

// Transport is the transport of every Slack client: enough idle
// connections for many sessions posting at once.
func Transport() *http.Transport { return netx.Transport(idleConns) }

// New makes the Web API client: slack-go's, over a transport that
// keeps enough connections alive for many sessions posting at once. m nil
// counts nothing.
func New(botToken, appToken, apiURL string, log *slog.Logger, m Metrics) *Client {
	if m == nil {
		m = noMetrics{}
	}
	hc := &http.Client{Transport: leaseGate{next: Transport()}}
	c := slack.New(botToken, slack.OptionAppLevelToken(appToken), slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(hc))
	return &Client{c: c, http: hc, token: botToken, log: log, apiURL: apiURL, permalinks: newLinkCache(maxPermalinks), metrics: m}
}

// Slack is slack-go's client underneath, for the calls h9 makes once
// (auth.test) and the Socket Mode connection.
func (s *Client) Slack() *slack.Client { return s.c }

// CloseIdleConnections closes the keep-alive connections to Slack.
func (s *Client) CloseIdleConnections() { s.http.CloseIdleConnections() }

// Call runs f, waiting out rate limits, and logs a final failure.
func (s *Client) Call(ctx context.Context, log *slog.Logger, method string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	transient := 0
	for attempt := 0; ; attempt++ {
		start := time.Now()
		err := f(ctx)
		var rl *slack.RateLimitedError
		limited := errors.As(err, &rl)
		if !errors.Is(err, errMessageLimits) && !errors.Is(err, errLeaseLost) { // refused before sending: no request
			s.metrics.SlackRequest(method, time.Since(start), limited)
		}
		wait := time.Duration(-1)
		switch {
		case limited && attempt < maxRateLimitRetries:
			wait = min(max(rl.RetryAfter, 100*time.Millisecond), maxRetryAfter)
			log.Debug("slack rate limited; waiting", "method", method, "retry_after", wait)
		case transientError(err) && transient < MaxTransientRetries:
			transient++
			wait = time.Duration(transient) * transientBackoff
			log.Warn("slack call failed; retrying", "method", method, "err", err, "retry_in", wait)
		}
		if wait >= 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				err = ctx.Err()
			}
		}
		switch {
		case errors.Is(err, errLeaseLost): // not Slack's failure: nothing was sent
			log.Info("slack call not sent: the session's lease moved", "method", method)
		case err != nil:
			s.metrics.SlackFailed(method)
			log.Error("slack call failed", "method", method, "err", err)
		}
		return err
	}
}

// transientError reports whether Slack refused a call without doing
// it, for a reason that may pass: retrying cannot post twice. Errors a user
// or the payload must fix (msg_too_long, invalid_blocks, not_in_channel…)
// are not transient.
func transientError(err error) bool {
	switch ErrorCode(err) {
	case "": // not an ok:false answer; maybe a gateway's status
	case "internal_error", "fatal_error", "service_unavailable", "request_timeout":
		return true
	default:
		return false
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Code == 502 || sc.Code == 503 || sc.Code == 504
	}
	return false
}

// msgOptions turns a rendered message into chat options. The text keeps
// mrkdwn (render has escaped what came from users and the model).
func msgOptions(m render.Message) []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false)}
	if len(m.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(m.Blocks...))
	}
	return opts
}

// PostMessage sends a message to a channel, in a thread when threadTS is set.
func (s *Client) PostMessage(ctx context.Context, log *slog.Logger, channel, threadTS string, m render.Message) (string, error) {
	var ts string
	err := s.Call(ctx, log, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ts, err = s.chatSend(ctx, channel, threadTS, "", m)
		return err
	})
	return ts, err
}

// Update edits a message in place.
func (s *Client) Update(ctx context.Context, log *slog.Logger, channel, ts string, m render.Message) error {
	if ts == "" {
		return nil
	}
	return s.Call(ctx, log, "chat.update", func(ctx context.Context) error {
		_, err := s.chatSend(ctx, channel, "", ts, m)
		return err
	})
}

// PostEphemeral shows a message to one user only (in a thread when
// threadTS is set). A failure is logged; callers that can do nothing
// about it ignore the error.
func (s *Client) PostEphemeral(ctx context.Context, log *slog.Logger, channel, user, threadTS string, m render.Message) error {
	if err := checkLimits(m); err != nil {
		s.metrics.SlackFailed("chat.postEphemeral")
		log.Error("slack call failed", "method", "chat.postEphemeral", "err", err)
		return err
	}
	opts := msgOptions(m)
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return s.Call(ctx, log, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := s.c.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// Respond answers a slash command through its response_url, ephemeral to
// the caller. Unlike chat.postEphemeral it works where the bot is not a
// member, which is when h9 most needs to explain itself. Falls back to
// chat.postEphemeral when there is no response_url or it fails.
func (s *Client) Respond(ctx context.Context, log *slog.Logger, responseURL, channel, user string, m render.Message) {
	if responseURL != "" {
		msg := &slack.WebhookMessage{Text: m.Text, ResponseType: slack.ResponseTypeEphemeral}
		if len(m.Blocks) > 0 {
			msg.Blocks = &slack.Blocks{BlockSet: m.Blocks}
		}
		err := s.Call(ctx, log, "response_url", func(ctx context.Context) error {
			return slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg)
		})
		if err == nil || channel == "" {
			return
		}
	}
	s.PostEphemeral(ctx, log, channel, user, "", m)
}

// FindChecklist returns the ts of the checklist in a session's thread: the
// first message of a bot there with the checklist's title block; "" when
// there is none or Slack cannot say.
func (s *Client) FindChecklist(ctx context.Context, log *slog.Logger, channel, thread string) string {
	var ts string
	_ = s.Call(ctx, log, "conversations.replies", func(ctx context.Context) error {
		msgs, _, _, err := s.c.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: thread, Limit: 50,
		})
		for _, m := range msgs {
			if m.BotID == "" || m.Timestamp == thread {
				continue
			}
			for _, b := range m.Blocks.BlockSet {
				if b.ID() == render.ChecklistTitleBlockID {
					ts = m.Timestamp
					return nil
				}
			}
		}
		return err
	})
	return ts
}

// ErrorCode is the code of Slack's ok:false answer in err ("" when
// err is not one).
func ErrorCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// errorIs reports whether err is Slack's ok:false answer with code.
func errorIs(err error, code string) bool {
	return err != nil && ErrorCode(err) == code
}

var (
	// errMessageLimits: a message h9 was about to send breaks Slack's
	// limits (render.CheckLimits), so it was not sent.
	errMessageLimits = errors.New("message breaks Slack's limits")
	// errLeaseLost: a Slack call for a session whose lease this replica no
	// longer holds was not sent.
	errLeaseLost = errors.New("the session's lease is no longer this replica's")
)

// Metrics hears the Web API calls. Its methods must be cheap, must not
// block and must be safe for concurrent use; method is one of the Web API
// methods named in this package.
type Metrics interface {
	// SlackRequest: one request of a call ("chat.postMessage",
	// "response_url", …) was answered or failed after d; each retry is a
	// request of its own. rateLimited: Slack answered 429.
	SlackRequest(method string, d time.Duration, rateLimited bool)
	// SlackFailed: a call failed for good, after its retries (or was
	// refused before sending, as too large for Slack).
	SlackFailed(method string)
}

// noMetrics counts nothing: New's default.
type noMetrics struct{}

func (noMetrics) SlackRequest(string, time.Duration, bool) {}
func (noMetrics) SlackFailed(string)                       {}

// leaseCheck rides on the context of a session's Slack calls: whether the
// lease they are made under still holds.
type leaseCheck struct{ valid func() bool }

type leaseKey struct{}

// WithLease marks ctx's Slack calls as made under a lease that valid
// reports still held; once it does not, they are refused unsent.
func WithLease(ctx context.Context, valid func() bool) context.Context {
	return context.WithValue(ctx, leaseKey{}, leaseCheck{valid: valid})
}

// leaseGate refuses a Web API request made under a lease this replica no
// longer holds, at the last moment before it leaves the process: a
// replica paused past its lease posts nothing once it resumes, whatever
// its goroutines were about to send.
type leaseGate struct{ next http.RoundTripper }

func (g leaseGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if c, ok := r.Context().Value(leaseKey{}).(leaseCheck); ok && !c.valid() {
		return nil, errLeaseLost
	}
	return g.next.RoundTrip(r)
}

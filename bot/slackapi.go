package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

const (
	// maxRateLimitRetries bounds how often one call waits out a 429.
	maxRateLimitRetries = 5
	// maxRetryAfter caps one wait, so a bogus header cannot park a session.
	maxRetryAfter = 60 * time.Second
	// callTimeout bounds one Web API call including its 429 waits.
	callTimeout = 2 * time.Minute
	// maxTransientRetries bounds retries of a call Slack refused for a
	// passing reason (internal_error, a 502/503/504), spaced by
	// transientBackoff, 2×transientBackoff, …
	maxTransientRetries = 3
	transientBackoff    = 500 * time.Millisecond
)

// slackAPI is the one door to the Web API: every call honours 429
// Retry-After and logs ok:false errors with their context.
type slackAPI struct {
	c          *slack.Client
	http       *http.Client // slack-go's, for the calls chatSend makes itself
	token      string       // the bot token, for those calls
	log        *slog.Logger
	apiURL     string
	permalinks *linkCache
	// noPermalinks: the endpoint answered chat.getPermalink with
	// unknown_method; links are built instead of asked for.
	noPermalinks atomic.Bool
	metrics      SlackMetrics
	// editing counts the checklists with an edit pending or in flight
	// (their flush goroutines), which spaces their edits past editBudget
	// of them (editSpacing; editsPerInterval, set once before use).
	editing    atomic.Int64
	editBudget int64
}

// slackIdleConns is how many idle keep-alive connections to Slack the bot
// keeps. Go's default of 2 per host makes every concurrent Web API call
// beyond two dial (and TLS-handshake) a new connection, which under a burst
// of commands costs more CPU than the calls and delays the socket's acks.
const slackIdleConns = 64

// slackIdleTimeout closes a keep-alive connection unused this long. A
// session's calls come seconds apart and keep theirs; the extra ones a
// burst opened (up to slackIdleConns, two goroutines each) close 30 s
// after it instead of Go's default 90 s (BENCHMARKS.md, issue 26).
const slackIdleTimeout = 30 * time.Second

// slackTransport is the default transport with enough idle connections for
// many sessions posting at once.
func slackTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = slackIdleConns
	t.MaxIdleConnsPerHost = slackIdleConns
	t.IdleConnTimeout = slackIdleTimeout
	return t
}

// newSlackAPI makes the Web API client: slack-go's, over a transport that
// keeps enough connections alive for many sessions posting at once.
func newSlackAPI(botToken, appToken, apiURL string, log *slog.Logger) *slackAPI {
	hc := &http.Client{Transport: leaseGate{next: slackTransport()}}
	c := slack.New(botToken, slack.OptionAppLevelToken(appToken), slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(hc))
	return &slackAPI{c: c, http: hc, token: botToken, log: log, apiURL: apiURL, permalinks: newLinkCache(maxPermalinks), metrics: noMetrics{},
		editBudget: editsPerInterval}
}

// call runs f, waiting out rate limits, and logs a final failure.
func (s *slackAPI) call(ctx context.Context, log *slog.Logger, method string, f func(context.Context) error) error {
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
		case transientSlackError(err) && transient < maxTransientRetries:
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

// transientSlackError reports whether Slack refused a call without doing
// it, for a reason that may pass: retrying cannot post twice. Errors a user
// or the payload must fix (msg_too_long, invalid_blocks, not_in_channel…)
// are not transient.
func transientSlackError(err error) bool {
	switch slackErrorCode(err) {
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

// post sends a message to a channel, in a thread when threadTS is set.
func (s *slackAPI) post(ctx context.Context, log *slog.Logger, channel, threadTS string, m render.Message) (string, error) {
	var ts string
	err := s.call(ctx, log, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ts, err = s.chatSend(ctx, channel, threadTS, "", m)
		return err
	})
	return ts, err
}

// update edits a message in place.
func (s *slackAPI) update(ctx context.Context, log *slog.Logger, channel, ts string, m render.Message) error {
	if ts == "" {
		return nil
	}
	return s.call(ctx, log, "chat.update", func(ctx context.Context) error {
		_, err := s.chatSend(ctx, channel, "", ts, m)
		return err
	})
}

// postEphemeral shows a message to one user only (in a thread when
// threadTS is set). A failure is logged; callers that can do nothing
// about it ignore the error.
func (s *slackAPI) postEphemeral(ctx context.Context, log *slog.Logger, channel, user, threadTS string, m render.Message) error {
	if err := checkLimits(m); err != nil {
		s.metrics.SlackFailed("chat.postEphemeral")
		log.Error("slack call failed", "method", "chat.postEphemeral", "err", err)
		return err
	}
	opts := msgOptions(m)
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	return s.call(ctx, log, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := s.c.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// respond answers a slash command through its response_url, ephemeral to
// the caller. Unlike chat.postEphemeral it works where the bot is not a
// member, which is when h9 most needs to explain itself. Falls back to
// chat.postEphemeral when there is no response_url or it fails.
func (s *slackAPI) respond(ctx context.Context, log *slog.Logger, responseURL, channel, user string, m render.Message) {
	if responseURL != "" {
		msg := &slack.WebhookMessage{Text: m.Text, ResponseType: slack.ResponseTypeEphemeral}
		if len(m.Blocks) > 0 {
			msg.Blocks = &slack.Blocks{BlockSet: m.Blocks}
		}
		err := s.call(ctx, log, "response_url", func(ctx context.Context) error {
			return slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg)
		})
		if err == nil || channel == "" {
			return
		}
	}
	s.postEphemeral(ctx, log, channel, user, "", m)
}

// findChecklist returns the ts of the checklist in a session's thread: the
// first message of a bot there with the checklist's title block; "" when
// there is none or Slack cannot say.
func (s *slackAPI) findChecklist(ctx context.Context, log *slog.Logger, channel, thread string) string {
	var ts string
	_ = s.call(ctx, log, "conversations.replies", func(ctx context.Context) error {
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

// text is a plain message: a mrkdwn string, no blocks.
func text(s string) render.Message { return render.Message{Text: s} }

// slackErrorCode is the code of Slack's ok:false answer in err ("" when
// err is not one).
func slackErrorCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// slackErrorIs reports whether err is Slack's ok:false answer with code.
func slackErrorIs(err error, code string) bool {
	return err != nil && slackErrorCode(err) == code
}

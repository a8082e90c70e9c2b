package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/h9-app/h9/bot"
	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/slackapi"
)

// slackAuthErrors are Slack's error codes meaning "this token is not accepted".
var slackAuthErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true,
	"token_revoked": true, "token_expired": true, "not_allowed_token_type": true,
}

func slackClient(cfg Config, token string, opts ...slack.Option) *slack.Client {
	opts = append(opts,
		slack.OptionAPIURL(cfg.SlackAPIURL),
		slack.OptionHTTPClient(&http.Client{Timeout: doctorCheckTimeout}))
	return slack.New(token, opts...)
}

// checkBotToken calls auth.test with the bot token.
func checkBotToken(ctx context.Context, cfg Config) finding {
	resp, err := slackClient(cfg, cfg.SlackBotToken).AuthTestContext(ctx)
	if err != nil {
		return failed(slackHint(err, "SLACK_BOT_TOKEN: copy the Bot User OAuth Token (xoxb-…) from OAuth & Permissions; reinstall the app if it was revoked", cfg),
			"auth.test failed: %v", err)
	}
	return ok("auth.test ok: @%s (%s) in team %s (%s)", resp.User, resp.UserID, resp.Team, resp.TeamID)
}

// checkAppToken calls apps.connections.open with the app-level token. The socket URL it
// returns is not dialled: proving that Socket Mode will hand out a connection is enough.
func checkAppToken(ctx context.Context, cfg Config) finding {
	api := slackClient(cfg, "", slack.OptionAppLevelToken(cfg.SlackAppToken))
	if _, _, err := api.StartSocketModeContext(ctx); err != nil {
		return failed(slackHint(err, "SLACK_APP_TOKEN: under Basic Information → App-Level Tokens create one with connections:write (xapp-…), and turn Socket Mode on", cfg),
			"apps.connections.open failed: %v", err)
	}
	return ok("apps.connections.open ok: Socket Mode is on and the app-level token works")
}

// checkSurfaces says which of Slack's agent surfaces h9 will use: a
// surface Slack refuses falls back to plain messages, so it warns.
func checkSurfaces(ctx context.Context, cfg Config) finding {
	refused, err := slackapi.ProbeSurfaces(ctx, slackClient(cfg, cfg.SlackBotToken))
	if err != nil {
		return failed(slackHint(err, "", cfg), "probing agents.sessions.setStatus and chat.appendStream failed: %v", err)
	}
	var on, off []string
	for _, x := range slackapi.Surfaces {
		if code := refused[x]; code != "" {
			off = append(off, fmt.Sprintf("%s (%s)", x, code))
		} else {
			on = append(on, string(x))
		}
	}
	if len(off) > 0 {
		return warned("add assistant:write and agent_view from manifest.yml and reinstall the app; until then h9 posts plain messages",
			"in use: %s; off: %s", cmp.Or(strings.Join(on, ", "), "none"), strings.Join(off, ", "))
	}
	return ok("in use: %s (agent session status, streamed text)", strings.Join(on, ", "))
}

// slackHint picks a hint: the token one for auth errors, a network one otherwise.
func slackHint(err error, tokenHint string, cfg Config) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		if slackAuthErrors[se.Err] {
			return tokenHint
		}
		if se.Err == "missing_scope" {
			return "add the missing scope (manifest.yml lists them) and reinstall the app"
		}
		return "see https://api.slack.com/methods for the error code"
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return "Slack is rate limiting this app; try again in a minute"
	}
	return "cannot reach SLACK_API_URL=" + cfg.SlackAPIURL + ": check the URL and the network"
}

// socketError is a token Slack refused at start (the bot token at
// auth.test, the app token in Socket Mode) as one line with doctor's hint.
func socketError(err error) error {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && errors.Is(err, bot.ErrBotTokenRefused) {
		return invalid("SLACK_BOT_TOKEN is not accepted by Slack (%s): copy the Bot User OAuth Token (xoxb-…) "+
			"from OAuth & Permissions; reinstall the app if it was revoked", se.Err)
	}
	if errors.As(err, &se) && slackAuthErrors[se.Err] {
		return invalid("SLACK_APP_TOKEN is not accepted by Slack (%s): under Basic Information → App-Level Tokens "+
			"create one with connections:write (xapp-…), and turn Socket Mode on", se.Err)
	}
	if errors.As(err, &se) && se.Err == "missing_scope" {
		return invalid("SLACK_APP_TOKEN lacks connections:write (missing_scope): regenerate it with that scope")
	}
	return err
}

// slackStartWait bounds the wait for Slack's first connection at start: a
// Slack h9 cannot reach then is a set-up problem to report in one line
// (exit 1), not one to retry forever. Once connected, h9 rides out later
// outages (RELIABILITY.md).
var slackStartWait = 90 * time.Second

// errSlackUnreachable marks that stop, an outage (exit 1).
var errSlackUnreachable = errors.New("slack unreachable at start")

// watchFirstConnection stops the run (stop, with an outage cause) unless
// connected turns true within wait; it watches nothing after that. The
// returned func ends the watch and waits for it.
func watchFirstConnection(ctx context.Context, connected func() bool, wait time.Duration, stop context.CancelCauseFunc, apiURL string) (unwatch func()) {
	ctx, cancel := context.WithCancel(ctx)
	var done sync.WaitGroup
	done.Go(func() {
		deadline := time.NewTimer(wait)
		defer deadline.Stop()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for !connected() {
			select {
			case <-ctx.Done():
				return
			case <-deadline.C:
				stop(lineErrorf(errSlackUnreachable, "Slack did not connect within %s: check that this host reaches SLACK_API_URL=%s "+
					"and wss://wss-primary.slack.com (proxy, firewall), or Slack's status page", wait, apiURL))
				return
			case <-tick.C:
			}
		}
	})
	return func() { cancel(); done.Wait() }
}

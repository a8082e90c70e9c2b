package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

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

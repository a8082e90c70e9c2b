package slackapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/slack-go/slack"
)

// chatResponse is what h9 reads from a chat.postMessage or chat.update
// answer. Slack also echoes the whole message, blocks included; slack-go
// decodes that echo into typed blocks, which cost more CPU than the rest of
// the call and was the largest share of a burst of new sessions
// (BENCHMARKS.md). Here the echo is only scanned past.
type chatResponse struct {
	OK               bool                   `json:"ok"`
	Error            string                 `json:"error"`
	TS               string                 `json:"ts"`
	MessageTS        string                 `json:"message_ts"` // slack-go's fallback for ts
	ResponseMetadata slack.ResponseMetadata `json:"response_metadata"`
}

// chatSend posts m to channel, in threadTS's thread when set, or with ts
// set edits that message; it returns the message's ts. The form is the one
// slack-go sends for PostMessage and UpdateMessage (text kept as mrkdwn,
// blocks as JSON; an edit always sends blocks, since chat.update keeps the
// old ones otherwise), and failures come back as slack-go's error types
// (SlackErrorResponse, *RateLimitedError, StatusCodeError), so Call's
// retries apply unchanged.
func (s *Client) chatSend(ctx context.Context, channel, threadTS, ts string, m render.Message) (string, error) {
	if err := checkLimits(m); err != nil {
		return "", err
	}
	method := "chat.postMessage"
	form := url.Values{"token": {s.token}, "channel": {channel}, "text": {m.Text}}
	if threadTS != "" {
		form.Set("thread_ts", threadTS)
	}
	if ts != "" {
		method = "chat.update"
		form.Set("ts", ts)
	}
	switch {
	case len(m.Blocks) > 0:
		blocks, err := json.Marshal(m.Blocks)
		if err != nil {
			return "", fmt.Errorf("encoding blocks: %w", err)
		}
		form.Set("blocks", string(blocks))
	case ts != "":
		form.Set("blocks", "[]")
	}
	resp, err := s.postForm(ctx, s.apiURL+method, form)
	if err != nil {
		return "", err
	}
	// As slack-go's SlackResponse.Err: ok:false is an error only with a code.
	if !resp.OK && strings.TrimSpace(resp.Error) != "" {
		return "", slack.SlackErrorResponse{Err: resp.Error, ResponseMetadata: resp.ResponseMetadata}
	}
	return cmp.Or(resp.TS, resp.MessageTS), nil
}

// postForm sends a form-encoded Web API call and decodes a chatResponse,
// mapping HTTP failures as slack-go does.
func (s *Client) postForm(ctx context.Context, endpoint string, form url.Values) (chatResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return chatResponse{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.http.Do(req)
	if err != nil {
		return chatResponse{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			return chatResponse{}, &slack.RateLimitedError{RetryAfter: time.Duration(secs) * time.Second}
		}
	}
	if resp.StatusCode != http.StatusOK {
		return chatResponse{}, slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
	}
	var r chatResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return chatResponse{}, fmt.Errorf("decoding Slack's answer: %w", err)
	}
	return r, nil
}

// checkLimits refuses a message Slack would refuse, before sending it and
// with what breaks which limit. render promises that none does; this keeps
// the promise checked in production too, not only in tests.
func checkLimits(m render.Message) error {
	if err := render.CheckLimits(m); err != nil {
		return fmt.Errorf("%w: %w", errMessageLimits, err)
	}
	return nil
}

// React adds an emoji reaction; "already_reacted" is success.
func (s *Client) React(ctx context.Context, log *slog.Logger, channel, ts, name string) {
	_ = s.Call(ctx, log, "reactions.add", func(ctx context.Context) error {
		err := s.c.AddReactionContext(ctx, name, slack.NewRefToMessage(channel, ts))
		if errorIs(err, "already_reacted") {
			return nil
		}
		return err
	})
}

// Unreact removes an emoji reaction; "no_reaction" is success.
func (s *Client) Unreact(ctx context.Context, log *slog.Logger, channel, ts, name string) {
	_ = s.Call(ctx, log, "reactions.remove", func(ctx context.Context) error {
		err := s.c.RemoveReactionContext(ctx, name, slack.NewRefToMessage(channel, ts))
		if errorIs(err, "no_reaction") {
			return nil
		}
		return err
	})
}

package slackapi

import (
	"context"
	"log/slog"

	"github.com/slack-go/slack"
)

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

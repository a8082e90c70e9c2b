package bot

import (
	"context"
	"log/slog"

	"github.com/slack-go/slack"
)

// The reactions h9 puts on a reply: queued behind the current run, then
// picked up when h9 starts on it.
const (
	reactionQueued   = "hourglass_flowing_sand"
	reactionPickedUp = "eyes"
)

// react adds an emoji reaction; "already_reacted" is success.
func (s *slackAPI) react(ctx context.Context, log *slog.Logger, channel, ts, name string) {
	_ = s.call(ctx, log, "reactions.add", func(ctx context.Context) error {
		err := s.c.AddReactionContext(ctx, name, slack.NewRefToMessage(channel, ts))
		if slackErrorIs(err, "already_reacted") {
			return nil
		}
		return err
	})
}

// unreact removes an emoji reaction; "no_reaction" is success.
func (s *slackAPI) unreact(ctx context.Context, log *slog.Logger, channel, ts, name string) {
	_ = s.call(ctx, log, "reactions.remove", func(ctx context.Context) error {
		err := s.c.RemoveReactionContext(ctx, name, slack.NewRefToMessage(channel, ts))
		if slackErrorIs(err, "no_reaction") {
			return nil
		}
		return err
	})
}

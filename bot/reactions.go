package bot

import (
	"context"
	"log/slog"

	"github.com/slack-go/slack"
)

// reactionPickedUp replaces reactionQueued once h9 starts on a queued reply.
const reactionPickedUp = "eyes"

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

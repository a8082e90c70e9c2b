package slackapi

import (
	"context"
	"log/slog"

	"github.com/slack-go/slack"
)

// maxPostPages bounds the pages of a thread searched for a post.
const maxPostPages = 10

// FindPost returns the ts of the message in a thread that is the post
// (found); "" when there is none or Slack cannot say.
func (s *Client) FindPost(ctx context.Context, log *slog.Logger, channel, thread string, found func(slack.Message) bool) string {
	var ts string
	cursor := ""
	for range maxPostPages {
		var msgs []slack.Message
		err := s.Call(ctx, log, "conversations.replies", func(ctx context.Context) error {
			var err error
			msgs, _, cursor, err = s.c.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: thread, Limit: 200, Cursor: cursor,
			})
			return err
		})
		if err != nil {
			return ""
		}
		for _, m := range msgs {
			if found(m) {
				ts = m.Timestamp
			}
		}
		if ts != "" || cursor == "" {
			return ts
		}
	}
	return ts
}

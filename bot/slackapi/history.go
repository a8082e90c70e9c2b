package slackapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"
)

// maxHistoryPages bounds the pages of a channel searched for a message.
const maxHistoryPages = 5

// FindInChannel returns the ts of the newest top-level message of channel
// posted since `since` for which found holds; "" when none is, and an
// error when Slack could not say (so the caller does not take "not
// there" for an answer).
func (s *Client) FindInChannel(ctx context.Context, log *slog.Logger, channel string, since time.Time, found func(slack.Message) bool) (string, error) {
	oldest := fmt.Sprintf("%d.%06d", since.Unix(), since.Nanosecond()/1000) // a Slack ts, exactly
	cursor := ""
	for range maxHistoryPages {
		var resp *slack.GetConversationHistoryResponse
		err := s.Call(ctx, log, "conversations.history", func(ctx context.Context) error {
			var err error
			resp, err = s.c.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: oldest, Limit: 200, Cursor: cursor,
			})
			return err
		})
		if err != nil {
			return "", err
		}
		for _, m := range resp.Messages {
			if found(m) {
				return m.Timestamp, nil
			}
		}
		cursor = resp.ResponseMetaData.NextCursor
		if cursor == "" {
			return "", nil
		}
	}
	return "", nil
}

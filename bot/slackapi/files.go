package slackapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/slack-go/slack"
)

// Upload shares a file into a thread the way Slack wants it now
// (files.getUploadURLExternal, the upload, files.completeUploadExternal
// with the thread's ts), comment as the sharing message's text.
func (s *Client) Upload(ctx context.Context, log *slog.Logger, channel, thread, name, comment string, data []byte) error {
	return s.Call(ctx, log, "files.uploadV2", func(ctx context.Context) error {
		_, err := s.c.UploadFileContext(ctx, slack.UploadFileParameters{
			Filename: name, Title: name, Reader: bytes.NewReader(data), FileSize: len(data),
			Channel: channel, ThreadTimestamp: thread, InitialComment: comment,
		})
		return err
	})
}

// UploadFrom is Upload for a file the agent shares (share_file): the
// bytes stream from r, titled title. A failure is the tool's error.
func (s *Client) UploadFrom(ctx context.Context, log *slog.Logger, channel, thread, name, title string, r io.Reader, size int64) error {
	return s.Call(ctx, log, "files.uploadV2", func(ctx context.Context) error {
		_, err := s.c.UploadFileContext(ctx, slack.UploadFileParameters{
			Filename: name, Title: title, Reader: r, FileSize: int(size),
			Channel: channel, ThreadTimestamp: thread,
		})
		return err
	})
}

// UserIdentity is a user's name and email from users.info (users:read and
// users:read.email), for a commit's Co-authored-by; ok false when Slack
// does not give both.
func (s *Client) UserIdentity(ctx context.Context, log *slog.Logger, user string) (name, email string, ok bool) {
	var u *slack.User
	err := s.Call(ctx, log, "users.info", func(ctx context.Context) error {
		var err error
		u, err = s.c.GetUserInfoContext(ctx, user)
		return err
	})
	if err != nil || u == nil {
		return "", "", false
	}
	name = strings.TrimSpace(u.Profile.RealName)
	if name == "" {
		name = strings.TrimSpace(u.RealName)
	}
	email = strings.TrimSpace(u.Profile.Email)
	if name == "" || email == "" {
		return "", "", false
	}
	return name, email, true
}

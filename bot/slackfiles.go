package bot

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/workspace/gitrepo"
)

// upload shares a file into a thread the way Slack wants it now
// (files.getUploadURLExternal, the upload, files.completeUploadExternal
// with the thread's ts), comment as the sharing message's text.
func (s *slackAPI) upload(ctx context.Context, log *slog.Logger, channel, thread, name, comment string, data []byte) error {
	return s.call(ctx, log, "files.uploadV2", func(ctx context.Context) error {
		_, err := s.c.UploadFileContext(ctx, slack.UploadFileParameters{
			Filename: name, Title: name, Reader: bytes.NewReader(data), FileSize: len(data),
			Channel: channel, ThreadTimestamp: thread, InitialComment: comment,
		})
		return err
	})
}

// identity is a user's name and email from users.info (users:read and
// users:read.email), for a commit's Co-authored-by; nil when Slack does
// not give both.
func (s *slackAPI) identity(ctx context.Context, log *slog.Logger, user string) *gitrepo.Identity {
	var u *slack.User
	err := s.call(ctx, log, "users.info", func(ctx context.Context) error {
		var err error
		u, err = s.c.GetUserInfoContext(ctx, user)
		return err
	})
	if err != nil || u == nil {
		return nil
	}
	name := strings.TrimSpace(u.Profile.RealName)
	if name == "" {
		name = strings.TrimSpace(u.RealName)
	}
	email := strings.TrimSpace(u.Profile.Email)
	if name == "" || email == "" {
		return nil
	}
	return &gitrepo.Identity{Name: name, Email: email}
}

// maxIdentities bounds the users whose identity the bot remembers.
const maxIdentities = 1024

// identities remembers users.info answers: a session's every checkpoint
// names its owner. Safe for concurrent use.
type identities struct {
	mu    sync.Mutex
	known map[string]*gitrepo.Identity
}

func (b *Bot) identity(ctx context.Context, log *slog.Logger, user string) *gitrepo.Identity {
	b.idents.mu.Lock()
	id, ok := b.idents.known[user]
	b.idents.mu.Unlock()
	if ok {
		return id
	}
	id = b.api.identity(ctx, log, user)
	if id == nil {
		return nil // asked again next time: Slack may have failed
	}
	b.idents.mu.Lock()
	defer b.idents.mu.Unlock()
	if b.idents.known == nil || len(b.idents.known) >= maxIdentities {
		b.idents.known = map[string]*gitrepo.Identity{}
	}
	b.idents.known[user] = id
	return id
}

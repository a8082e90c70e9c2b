package bot

import (
	"context"
	"io"
	"log/slog"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent"
)

// uploadFrom is upload for a file the agent shares (share_file): the
// bytes stream from r, titled title. A failure is the tool's error.
func (s *slackAPI) uploadFrom(ctx context.Context, log *slog.Logger, channel, thread, name, title string, r io.Reader, size int64) error {
	return s.call(ctx, log, "files.uploadV2", func(ctx context.Context) error {
		_, err := s.c.UploadFileContext(ctx, slack.UploadFileParameters{
			Filename: name, Title: title, Reader: r, FileSize: int(size),
			Channel: channel, ThreadTimestamp: thread,
		})
		return err
	})
}

// sharer is the run's agent.FileSharer: share_file's uploads go into the
// session's thread, after its checklist. channel and thread are taken on
// the actor, before the run starts.
func (a *actor) sharer(channel, thread string) agent.FileSharer {
	check, api, log := a.check, a.b.api, a.log
	return func(ctx context.Context, name, title string, r io.Reader, size int64) error {
		if check != nil {
			check.waitFirstPost()
		}
		return api.uploadFrom(ctx, log, channel, thread, name, title, r, size)
	}
}

package bot

import (
	"context"
	"io"

	"github.com/h9-app/h9/agent"
)

// sharer is the run's agent.FileSharer: share_file's uploads go into the
// session's thread, after its checklist. channel and thread are taken on
// the actor, before the run starts.
func (a *actor) sharer(channel, thread string) agent.FileSharer {
	check, api, log := a.check, a.b.api, a.log
	return func(ctx context.Context, name, title string, r io.Reader, size int64) error {
		if check != nil {
			check.waitFirstPost()
		}
		return api.UploadFrom(ctx, log, channel, thread, name, title, r, size)
	}
}

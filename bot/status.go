package bot

import (
	"slices"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// maxStatusRows bounds /h9 status: the most recent sessions are the useful ones.
const maxStatusRows = 20

// postChannelStatus answers /h9 status (and "@h9 status" outside a session)
// with the channel's sessions, most recent first.
func (b *Bot) postChannelStatus(team, channel, user, thread, responseURL string) {
	log := b.log.With("channel", channel, "user", user)
	recs, err := b.store.channel(team, channel)
	if err != nil {
		log.Error("status", "err", err)
		b.api.ephemeral(b.bg, log, channel, user, thread, text("h9 could not read its sessions just now; try again in a moment."))
		return
	}
	slices.SortFunc(recs, byRecent)
	if len(recs) > maxStatusRows {
		recs = recs[:maxStatusRows]
	}
	rows := make([]render.StatusRow, 0, len(recs))
	for _, rec := range recs {
		rows = append(rows, b.statusRow(rec))
	}
	status := render.RenderStatus(rows)
	if thread == "" {
		b.api.ephemeralOrRespond(b.bg, log, responseURL, channel, user, status)
		return
	}
	b.api.ephemeral(b.bg, log, channel, user, thread, status)
}

// statusRow is one session's line; a running session's progress comes
// from the agent's persisted todos, which are newer than the record's.
func (b *Bot) statusRow(rec *Session) render.StatusRow {
	p := rec.Progress
	if rec.Running {
		if todos, err := b.cfg.Agent.Todos(rec.ID); err == nil {
			p = planning.Summarize(todos)
		}
	}
	return render.StatusRow{
		Task: rec.Task, State: rec.State, Progress: p, Updated: rec.Updated,
		Permalink: b.api.permalink(b.bg, b.log, rec.Channel, rec.ThreadTS),
	}
}

// onStatus answers "@h9 status" inside a thread.
func (a *actor) onStatus(user string, exists bool) {
	if !exists {
		team, channel, thread, ok := splitSessionID(a.id)
		if ok {
			a.b.api.ephemeral(a.b.bg, a.b.log, channel, user, thread, text("There is no h9 session in this thread. Here are this channel's sessions."))
			a.b.postChannelStatus(team, channel, user, thread, "")
		}
		return
	}
	a.b.api.ephemeral(a.b.bg, a.log, a.rec.Channel, user, a.rec.ThreadTS, render.RenderThreadStatus(a.b.statusRow(a.rec)))
}

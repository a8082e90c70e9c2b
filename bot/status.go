package bot

import (
	"slices"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// maxStatusRows bounds /h9 status: the most recent sessions are the useful ones.
const maxStatusRows = 20

// postChannelStatus answers /h9 status (and "@h9 status" outside a session)
// with the channel's sessions, most recent first.
func (b *Bot) postChannelStatus(channel, user, thread, responseURL string) {
	log := b.log.With("channel", channel, "user", user)
	recs, err := b.listChannel(channel)
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
		row, _ := b.statusRow(rec)
		rows = append(rows, row)
	}
	status := render.RenderStatus(rows)
	if thread == "" {
		b.api.ephemeralOrRespond(b.bg, log, responseURL, channel, user, status)
		return
	}
	b.api.ephemeral(b.bg, log, channel, user, thread, status)
}

// listChannel decodes a channel's sessions; one that does not decode is
// logged and left out rather than hiding the others.
func (b *Bot) listChannel(channel string) ([]*Session, error) {
	recs, err := b.store.ListChannel(b.bg, channel)
	if err != nil {
		return nil, err
	}
	out := make([]*Session, 0, len(recs))
	for _, r := range recs {
		s, err := decodeSession(r)
		if err != nil {
			b.log.Warn("status: a session does not decode", "session", r.Meta.ID, "err", err)
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// statusRow is one session's line, and its tokens; a running session's
// progress and tokens come from the agent's latest commit, which is newer
// than the record's.
func (b *Bot) statusRow(rec *Session) (render.StatusRow, agent.Usage) {
	p, tokens := rec.Progress, rec.Tokens
	if rec.State.inFlight() {
		if snap, err := b.cfg.Agent.Snapshot(b.bg, rec.ID); err == nil {
			p, tokens = planning.Summarize(snap.Todos), latest(snap.Total, tokens)
		}
	}
	row := render.StatusRow{
		Task: rec.Task, State: rec.State.label(), Progress: p, Updated: rec.Updated,
		Spend:     b.cfg.tokenRules().spend(tokens),
		Permalink: b.api.permalink(b.bg, b.log, rec.Channel, rec.ThreadTS),
	}
	if rec.Repo != nil {
		line := rec.Repo.line()
		row.Repo = &line
	}
	row.Request = rec.Follow.status()
	if row.Request == "" && rec.Repo != nil && rec.Repo.PullRequest != "" {
		row.Request = rec.Repo.PullRequest + ", not followed"
	}
	return row, tokens
}

// onStatus answers "@h9 status" inside a thread.
func (a *actor) onStatus(user string) {
	if a.rec == nil {
		a.b.api.ephemeral(a.ctx, a.log, a.key.channel, user, a.key.ts, text("There is no h9 session in this thread. Here are this channel's sessions."))
		a.b.postChannelStatus(a.key.channel, user, a.key.ts, "")
		return
	}
	row, _ := a.b.statusRow(a.rec)
	a.b.api.ephemeral(a.ctx, a.log, a.rec.Channel, user, a.rec.ThreadTS, render.RenderThreadStatus(row))
}

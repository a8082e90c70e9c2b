package bot

import (
	"context"
	"slices"
	"time"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/planning"
)

// maxStatusRows bounds /h9 status: the most recent sessions are the useful ones.
const maxStatusRows = 20

// statusLinkWait bounds how long /h9 status waits on chat.getPermalink,
// for all its rows together: past it the links are built from the API URL
// (Slack redirects them), so a slow Web API delays the answer by this
// much at most. The response_url it answers through is not the Web API.
const statusLinkWait = 2 * time.Second

// postChannelStatus answers /h9 status (and "@h9 status" outside a session)
// with the channel's sessions, most recent first.
//
// A slash command's answer goes through its response_url, which needs no
// Web API call, so /h9 status answers while the Web API hangs; it falls
// back to chat.postEphemeral when the response_url fails.
func (b *Bot) postChannelStatus(channel, user, thread, responseURL string) {
	log := b.log.With("channel", channel, "user", user)
	answer := func(m render.Message) {
		if thread == "" && responseURL != "" {
			b.api.Respond(b.bg, log, responseURL, channel, user, m)
			return
		}
		b.api.PostEphemeral(b.bg, log, channel, user, thread, m)
	}
	recs, err := b.listChannel(channel)
	if err != nil {
		log.Error("status", "err", err)
		answer(text("h9 could not read its sessions just now; try again in a moment."))
		return
	}
	slices.SortFunc(recs, byRecent)
	if len(recs) > maxStatusRows {
		recs = recs[:maxStatusRows]
	}
	links, cancel := context.WithTimeout(b.bg, statusLinkWait)
	defer cancel()
	rows := make([]render.StatusRow, 0, len(recs))
	for _, rec := range recs {
		row, _ := b.statusRow(links, rec)
		rows = append(rows, row)
	}
	answer(render.RenderStatus(rows))
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
// Its link is asked of Slack under links (a deadline of the caller's).
func (b *Bot) statusRow(links context.Context, rec *Session) (render.StatusRow, agent.Usage) {
	p, tokens := rec.Progress, rec.Tokens
	if rec.State.inFlight() {
		if snap, err := b.cfg.Agent.Snapshot(b.bg, rec.ID); err == nil {
			p, tokens = planning.Summarize(snap.Todos), latest(snap.Total, tokens)
		}
	}
	row := render.StatusRow{
		Task: rec.Task, State: rec.stateLabel(), Progress: p, Updated: rec.Updated,
		Spend:     b.cfg.tokenRules().spend(tokens),
		Permalink: b.api.Permalink(links, b.log, rec.Channel, rec.ThreadTS),
	}
	if rec.Repo != nil {
		line := rec.Repo.line()
		row.Repo = &line
	}
	row.Request = rec.Follow.Describe()
	if row.Request == "" && rec.Repo != nil && rec.Repo.PullRequest != "" {
		row.Request = rec.Repo.PullRequest + ", not followed"
	}
	return row, tokens
}

// onStatus answers "@h9 status" inside a thread.
func (a *actor) onStatus(user string) {
	if a.rec == nil {
		a.b.api.PostEphemeral(a.ctx, a.log, a.key.channel, user, a.key.ts, text("There is no h9 session in this thread. Here are this channel's sessions."))
		a.b.postChannelStatus(a.key.channel, user, a.key.ts, "")
		return
	}
	links, cancel := context.WithTimeout(a.ctx, statusLinkWait)
	defer cancel()
	row, _ := a.b.statusRow(links, a.rec)
	a.b.api.PostEphemeral(a.ctx, a.log, a.rec.Channel, user, a.rec.ThreadTS, render.RenderThreadStatus(row))
}

package bot

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/agent"
	"github.com/h9-app/h9/bot/render"
)

// maxHomeRows bounds the sessions on a user's Home tab.
const maxHomeRows = 20

// publishHome answers app_home_opened: the Home tab with what h9 is, how to
// start, the tokens all the user's sessions used and their recent
// sessions. Failures are logged, never shown: the Home tab is a courtesy,
// not part of a session.
func (b *Bot) publishHome(user string) {
	log := b.log.With("user", user)
	recs, err := b.store.ListOwner(b.bg, user, 0) // all of them, for the total
	if err != nil {
		log.Warn("home tab: listing sessions", "err", err)
	}
	rows := make([]render.HomeRow, 0, min(len(recs), maxHomeRows))
	var total agent.Usage
	links, cancel := context.WithTimeout(b.bg, statusLinkWait)
	defer cancel()
	for _, r := range recs {
		rec, err := decodeSession(r)
		if err != nil {
			log.Warn("home tab: a session does not decode", "session", r.Meta.ID, "err", err)
			continue // one bad record must not hide the others
		}
		if len(rows) == maxHomeRows {
			total = total.Plus(rec.Tokens)
			continue
		}
		row, tokens := b.statusRow(links, rec)
		total = total.Plus(tokens)
		rows = append(rows, render.HomeRow{StatusRow: row, Channel: rec.Channel})
	}
	home := render.WithInstructions(render.RenderHome(rows, b.cfg.tokenRules().spend(total)), b.homeInstructions(log, rows))
	home = append(home, b.homeAutomations(links, log)...) // automations_commands.go
	view := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: home}}
	_ = b.api.Call(b.bg, log, "views.publish", func(ctx context.Context) error {
		_, err := b.api.Slack().PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
}

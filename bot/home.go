package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/slack-go/slack"
	bolt "go.etcd.io/bbolt"

	"github.com/h9-app/h9/bot/render"
)

// maxHomeRows bounds the sessions on a user's Home tab.
const maxHomeRows = 20

// publishHome answers app_home_opened: the Home tab with what h9 is, how to
// start and the user's recent sessions. Failures are logged, never shown:
// the Home tab is a courtesy, not part of a session.
func (b *Bot) publishHome(user string) {
	log := b.log.With("user", user)
	recs, err := b.store.owned(user, maxHomeRows)
	if err != nil {
		log.Warn("home tab: listing sessions", "err", err)
	}
	rows := make([]render.HomeRow, 0, len(recs))
	for _, rec := range recs {
		rows = append(rows, render.HomeRow{StatusRow: b.statusRow(rec), Channel: rec.Channel})
	}
	view := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: render.RenderHome(rows)}}
	_ = b.api.call(b.bg, log, "views.publish", func(ctx context.Context) error {
		_, err := b.api.c.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
}

// owned lists the sessions user started, most recently updated first, at
// most limit. It scans the bucket; a byte check skips other owners' records
// without decoding them.
func (s *store) owned(user string, limit int) ([]*Session, error) {
	owner, _ := json.Marshal(user)
	needle := append([]byte(`"owner":`), owner...)
	var out []*Session
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			if !bytes.Contains(v, needle) {
				return nil
			}
			rec := new(Session)
			if err := json.Unmarshal(v, rec); err != nil || rec.Owner != user {
				return nil // one bad record must not hide the others
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, byRecent)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

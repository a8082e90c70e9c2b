package bot

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/h9-app/h9/bot/render"
)

// The machine's side of idempotent posts (posts.go): a move records each
// thread message it decides to post as a pending post, and evPosted
// records that it went out.
//
// The words for sending a message, here and in the actor and the Web API
// client, are Slack's own: post (chat.postMessage, seen by the whole
// thread), postEphemeral (chat.postEphemeral, seen by one user) and
// respond (a slash command's response_url).

// post records a post of msg and asks for it.
func (m *move) post(kind string, msg render.Message) {
	s := m.s
	s.PostSeq++
	key := kind + "-" + strconv.Itoa(s.PostSeq)
	blocks, _ := json.Marshal(msg.Blocks) // render's blocks always encode
	if len(msg.Blocks) == 0 {
		blocks = nil
	}
	s.Posts = append(s.Posts, PendingPost{Key: key, Kind: kind, Text: msg.Text, Blocks: blocks})
	m.do(effPost{key: key, kind: kind, msg: msg})
}

// evPosted: a pending post was posted (ts; "" when Slack refused it, which
// is logged and not tried again) or found in the thread.
type evPosted struct{ key, ts string }

func (e evPosted) apply(m *move) {
	s := m.s
	i := slices.IndexFunc(s.Posts, func(p PendingPost) bool { return p.Key == e.key })
	if i < 0 {
		return
	}
	switch s.Posts[i].Kind {
	case postNetwork:
		s.networkPosted(e.key, e.ts)
	case postReview:
		s.ReviewTS = e.ts
	case postBudget:
		s.BudgetTS = e.ts
	case postFeedback:
		if b := s.Follow.Current(); b != nil && b.TS == "" {
			b.TS = e.ts
		}
	}
	s.Posts = slices.Delete(s.Posts, i, i+1)
	m.do(effSave{})
}

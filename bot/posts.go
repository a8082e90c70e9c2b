package bot

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/slack-go/slack"

	"github.com/h9-app/h9/bot/render"
)

// Idempotent posts. A transition that posts in the thread records the
// post in the session first (PendingPost, with a key unique in the
// session), the record is saved before the post goes out with the key in
// its first block id, and the post's ts is recorded after (evPosted). A
// restart or a takeover that finds a post still pending looks for it in
// the thread and adopts it, posting it only when it is not there: a
// takeover never posts a second review, Done, stalled or error message.
// (The checklist is adopted the same way, by its title block.)

// Kinds of pending posts: a review's ts is what its decision edits, a
// budget message's what Raise budget edits.
const (
	postNotice = "notice"
	postReview = "review"
	postBudget = "budget"
	postDiff   = "diff" // an upload: Text is the file's name (uploads.go)
)

// PendingPost is a thread message a transition decided to post, not yet
// known to be posted. The message is kept encoded as Slack takes it.
type PendingPost struct {
	Key    string          `json:"key"`
	Kind   string          `json:"kind"`
	Text   string          `json:"text"`
	Blocks json.RawMessage `json:"blocks,omitempty"`
	// Words: a notice carrying a run's words, which edits the run's
	// streamed message when there is one (stream.go).
	Words bool `json:"words,omitempty"`
}

// message decodes a pending post back into what is sent.
func (p PendingPost) message() render.Message {
	m := render.Message{Text: p.Text}
	if len(p.Blocks) > 0 {
		var bs slack.Blocks
		if json.Unmarshal(p.Blocks, &bs) == nil {
			m.Blocks = bs.BlockSet
		}
	}
	return m
}

// postPending posts the pending post key, after its intent is stored.
func (a *actor) postPending(key string) {
	i := slices.IndexFunc(a.rec.Posts, func(p PendingPost) bool { return p.Key == key })
	if i < 0 {
		return
	}
	p := a.rec.Posts[i]
	if !a.durable[key] {
		a.save()
		if !a.holding() {
			return
		}
		if !a.durable[key] { // the save failed: never post what no record holds
			a.postLater(key)
			return
		}
	}
	if p.Kind == postDiff {
		a.uploadDiff(p)
		return
	}
	a.retireStreamFor(p)
	a.apply(evPosted{key: key, ts: a.post(withKey(p))})
}

// finishPosts finishes what a previous holder left pending: each post found
// in the thread is adopted, the others are posted.
func (a *actor) finishPosts() {
	for _, p := range slices.Clone(a.rec.Posts) {
		if !a.holding() {
			return
		}
		if ts := a.b.api.FindPost(a.ctx, a.log, a.rec.Channel, a.rec.ThreadTS, p.found); ts != "" {
			a.log.Info("adopted a post a previous holder made", "key", p.Key, "ts", ts)
			a.apply(evPosted{key: p.Key, ts: ts})
			continue
		}
		a.postPending(p.Key)
	}
}

// found reports whether m is the post p: the bot's message whose first
// block carries its key, or for an upload the message sharing its file.
func (p PendingPost) found(m slack.Message) bool {
	if p.Kind == postDiff {
		return slices.ContainsFunc(m.Files, func(f slack.File) bool { return f.Name == p.Text || f.Title == p.Text })
	}
	return m.BotID != "" && len(m.Blocks.BlockSet) > 0 && render.PostKey(m.Blocks.BlockSet[0].ID()) == p.Key
}

// text is a plain message: a mrkdwn string, no blocks.
func text(s string) render.Message { return render.Message{Text: s} }

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

// postWords posts msg, a notice carrying the run's words (PendingPost.Words).
func (m *move) postWords(msg render.Message) {
	m.post(postNotice, msg)
	m.s.Posts[len(m.s.Posts)-1].Words = true
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

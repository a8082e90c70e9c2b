package bot

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
)

// After the addressing run: the push, then the answers on the forge, each
// sent once (its marker found again after a crash).

// evFeedbackPushed: the branch with the addressing run's work was pushed.
type evFeedbackPushed struct {
	head string
	err  error
}

func (e evFeedbackPushed) apply(m *move) {
	s := m.s
	b := s.Follow.batch()
	if b == nil || b.Status != batchPushing {
		return
	}
	if e.err != nil {
		b.Status = batchDone
		m.logError("pushing the addressed feedback failed", "err", e.err)
		m.postNotice(text(":x: h9 could not push `" + render.Escape(s.Repo.Branch) + "`, so it did not answer on " + s.Follow.label() + ": " +
			render.Escape(render.Truncate(e.err.Error(), 1500))))
		m.do(effSave{})
		return
	}
	changed := e.head != "" && e.head != s.Follow.HeadSHA
	s.Follow.HeadSHA, b.Since = e.head, cloneCursor(s.Follow.Cursor)
	b.Replies, b.Status, b.Tries = forgeReplies(b, shortSHA(e.head), changed), batchReplying, 0
	if changed {
		m.postNotice(text(":arrow_up: Pushed `" + render.Escape(s.Repo.Branch) + "` (" + shortSHA(e.head) + "); answering on " + s.Follow.label() + "."))
	}
	m.replyAttempt()
}

// replyAttempt records an attempt at the replies before it is made, so
// that a later attempt first looks for what this one sent.
func (m *move) replyAttempt() {
	m.s.Follow.Batch.Tries++
	m.do(effSave{}, effForgeReply{})
}

// evRepliesSent: the replies with these keys are on the forge.
type evRepliesSent struct {
	keys []string
	err  error
}

func (e evRepliesSent) apply(m *move) {
	b := m.s.Follow.batch()
	if b == nil || b.Status != batchReplying {
		return
	}
	for _, k := range e.keys {
		for i := range b.Replies {
			if b.Replies[i].Key == k {
				b.Replies[i].Sent = true
			}
		}
	}
	if e.err != nil {
		m.do(effLog{level: slog.LevelWarn, msg: "answering on the request failed; trying again at the next poll", args: []any{"err", e.err}})
		if until, ok := rateLimited(e.err); ok {
			m.s.Follow.NextPoll = until
		}
		m.do(effSave{})
		return
	}
	b.Status = batchDone
	n := len(b.Replies) - 1
	m.postNotice(text(":speech_balloon: Answered on " + m.s.Follow.label() + ": " + render.Escape(pluralWord(n, "reply", "replies")) + " and a summary comment."))
	m.do(effSave{})
}

// markSent notes a reply found on the forge by its marker.
func (b *Batch) markSent(body string) {
	if b == nil {
		return
	}
	for i := range b.Replies {
		if strings.Contains(body, replyMarker(b.Replies[i].Key)) {
			b.Replies[i].Sent = true
		}
	}
}

// forgeReplies are the answers: one to each inline comment given, then
// the summary on the request.
func forgeReplies(b *Batch, short string, changed bool) []ForgeReply {
	var out []ForgeReply
	for i, fb := range b.Feedback {
		if fb.Kind != forge.Inline {
			continue
		}
		body := "Addressed in " + short
		if !changed {
			body = firstOf(firstLine(b.Answer), "h9 looked at this and changed nothing.")
		}
		to := fb
		out = append(out, ForgeReply{Key: replyKey(b.Seq, i), To: &to, Body: body + "\n\n" + replyMarker(replyKey(b.Seq, i))})
	}
	summary := summaryText(b, b.Answer, short, changed)
	return append(out, ForgeReply{Key: replyKey(b.Seq, -1), Body: summary + "\n\n" + replyMarker(replyKey(b.Seq, -1))})
}

func summaryText(b *Batch, answer, short string, changed bool) string {
	what := pluralWord(len(b.Feedback), "comment", "comments") + " and " + pluralWord(len(b.Failed), "failing check", "failing checks")
	head := "h9 addressed " + what + " in " + short + "."
	if !changed {
		head = "h9 looked at " + what + " and changed nothing."
	}
	if answer != "" {
		head += "\n\n" + answer
	}
	return head
}

// maxAnswer bounds the run's answer kept for the summary comment.
const maxAnswer = 3000

func replyKey(seq, i int) string {
	if i < 0 {
		return "b" + strconv.Itoa(seq) + "-summary"
	}
	return "b" + strconv.Itoa(seq) + "-" + strconv.Itoa(i)
}

// replyMarker ends every body h9 writes on a forge: hidden when rendered,
// it is how a later attempt finds what an earlier one sent.
func replyMarker(key string) string { return "<!-- h9:" + key + " -->" }

func shortSHA(sha string) string { return sha[:min(len(sha), 7)] }

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return render.Truncate(l, 300)
		}
	}
	return ""
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

package follow

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/h9-app/h9/bot/render"
	"github.com/h9-app/h9/workspace/forge"
)

// What h9 does on the forge: reading the request, and answering a batch
// once its work is pushed. Every body h9 writes ends with a hidden marker,
// so that an attempt after a crash finds what an earlier one sent and
// sends each reply once.

// CallTimeout bounds each forge call of following.
const CallTimeout = 30 * time.Second

// Read reads what is new on f's request since its cursor, within
// CallTimeout.
func Read(ctx context.Context, c forge.Client, f Follow) (forge.Update, forge.Cursor, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return c.Poll(ctx, f.Number, f.HeadSHA, f.Cursor)
}

// SendReplies sends the latest batch's replies not yet sent, each within
// CallTimeout, and returns the keys of those now on the forge. A later
// attempt (Tries > 1: an earlier one may have sent some and not lived to
// record it) first reads the request from before the first attempt and
// counts every reply whose marker it finds there as sent.
func SendReplies(ctx context.Context, c forge.Client, f Follow) ([]string, error) {
	b := f.Batch
	if b.Tries > 1 {
		pctx, cancel := context.WithTimeout(ctx, CallTimeout)
		up, _, err := c.Poll(pctx, f.Number, f.HeadSHA, b.Since)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("looking for the replies an earlier attempt sent: %w", err)
		}
		for _, fb := range up.Feedback {
			if fb.Mine {
				b.MarkSent(fb.Body)
			}
		}
	}
	var sent []string
	for _, r := range b.Replies {
		if r.Sent {
			sent = append(sent, r.Key)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, CallTimeout)
		var err error
		if r.To != nil {
			err = c.Reply(rctx, f.Number, *r.To, r.Body)
		} else {
			err = c.Comment(rctx, f.Number, r.Body)
		}
		cancel()
		if err != nil {
			return sent, err
		}
		sent = append(sent, r.Key)
	}
	return sent, nil
}

// MarkSent notes a reply found on the forge by its marker.
func (b *Batch) MarkSent(body string) {
	if b == nil {
		return
	}
	for i := range b.Replies {
		if strings.Contains(body, Marker(b.Replies[i].Key)) {
			b.Replies[i].Sent = true
		}
	}
}

// replies are the answers: one to each inline comment given, then the
// summary on the request; short is the commit pushed, changed whether
// the branch moved.
func replies(b *Batch, short string, changed bool) []Reply {
	var out []Reply
	for i, fb := range b.Feedback {
		if fb.Kind != forge.Inline {
			continue
		}
		body := "Addressed in " + short
		if !changed {
			body = cmp.Or(firstLine(b.Answer), "h9 looked at this and changed nothing.")
		}
		to := fb
		out = append(out, Reply{Key: replyKey(b.Seq, i), To: &to, Body: body + "\n\n" + Marker(replyKey(b.Seq, i))})
	}
	summary := Summary(b, short, changed)
	return append(out, Reply{Key: replyKey(b.Seq, -1), Body: summary + "\n\n" + Marker(replyKey(b.Seq, -1))})
}

// Summary is the summary comment on the request: what h9 addressed (only
// what there was: comments, failing checks or both), in which commit, and
// the run's own words.
func Summary(b *Batch, short string, changed bool) string {
	var parts []string
	if n := len(b.Feedback); n > 0 {
		parts = append(parts, Plural(n, "comment", "comments"))
	}
	if n := len(b.Failed); n > 0 {
		parts = append(parts, Plural(n, "failing check", "failing checks"))
	}
	what := cmp.Or(strings.Join(parts, " and "), "the feedback")
	head := "h9 addressed " + what + " in " + short + "."
	if !changed {
		head = "h9 looked at " + what + " and changed nothing."
	}
	if b.Answer != "" {
		head += "\n\n" + b.Answer
	}
	return head
}

func replyKey(seq, i int) string {
	if i < 0 {
		return "b" + strconv.Itoa(seq) + "-summary"
	}
	return "b" + strconv.Itoa(seq) + "-" + strconv.Itoa(i)
}

// Marker ends every body h9 writes on a forge: hidden when rendered, it
// is how a later attempt finds what an earlier one sent.
func Marker(key string) string { return "<!-- h9:" + key + " -->" }

func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return render.Truncate(l, 300)
		}
	}
	return ""
}

// Plural is "1 reply", "2 replies".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

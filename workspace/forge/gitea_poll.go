package forge

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// gtPoll is one Poll's state: the cursor being advanced, what was found,
// and the SDK client whose requests are counted.
type gtPoll struct {
	g         *gitea
	c         *sdk.Client
	hc        *http.Client // counts its requests
	cur       Cursor
	number    int
	up        Update
	requests  atomic.Int64
	assignees map[string]bool // lower-case logins, read once a poll when needed
}

// Poll reads the pull request, its reviews (and the comments of each
// review whose count grew), the conversation comments since the newest
// seen, and the combined status of headSHA. Gitea's API serves no ETags,
// so a quiet pull request costs three small requests (the statuses of a
// settled head every settledEvery polls). On an error the cursor is the
// one given, so the next poll asks again.
func (g *gitea) Poll(ctx context.Context, number int, headSHA string, cur Cursor) (Update, Cursor, error) {
	p := &gtPoll{g: g, cur: cur.clone(), number: number}
	g.learnVersion(p.cur.Seen["version"])
	err := p.run(ctx, headSHA)
	p.up.Requests = int(p.requests.Load())
	if err != nil {
		return Update{Requests: p.up.Requests}, cur, err
	}
	return p.up, p.cur, nil
}

func (p *gtPoll) run(ctx context.Context, headSHA string) error {
	p.hc = p.counted()
	c, err := p.g.client(ctx, p.hc)
	if err != nil {
		return err
	}
	p.c, p.cur.Seen["version"] = c, p.g.serverVersion()
	if err := p.state(); err != nil {
		return err
	}
	if headSHA == "" {
		headSHA = p.up.State.HeadSHA
	}
	for _, step := range []func() error{p.me, p.reviews, p.conversation} {
		if err := step(); err != nil {
			return err
		}
	}
	if p.cur.readChecks(headSHA) {
		if err := p.statuses(ctx, headSHA); err != nil {
			return err
		}
		p.cur.Seen["checked"] = headSHA
	}
	return nil
}

// counted is the client's HTTP client with every request counted.
func (p *gtPoll) counted() *http.Client {
	hc := *p.g.hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = countingTransport{base: base, n: &p.requests}
	return &hc
}

type countingTransport struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.base.RoundTrip(r)
}

// state reads the pull request: open, merged (by whom) or closed (by
// whom: the timeline's close event, read once), and its head commit.
func (p *gtPoll) state() error {
	pr, resp, err := p.c.GetPullRequest(p.g.owner, p.g.name, int64(p.number))
	if err != nil {
		return p.g.err("reading the pull request", resp, err)
	}
	state, by := StateOpen, ""
	switch {
	case pr.HasMerged:
		state = StateMerged
		if pr.MergedBy != nil {
			by = pr.MergedBy.UserName
		}
	case pr.State == sdk.StateClosed:
		state = StateClosed
		if p.cur.Seen["state"] == StateClosed {
			by = p.cur.Seen["by"]
		} else {
			by = p.closedBy(pr.Closed)
		}
	}
	head := ""
	if pr.Head != nil {
		head = pr.Head.Sha
	}
	p.cur.Seen["state"], p.cur.Seen["by"], p.cur.Seen["head"] = state, by, head
	p.up.State = RequestState{State: state, By: by, HeadSHA: head}
	return nil
}

// closedBy is who closed the pull request, from its timeline around
// closed (Gitea's pull request does not say); "" when it cannot be read.
func (p *gtPoll) closedBy(closed *time.Time) string {
	opt := sdk.ListIssueCommentOptions{ListOptions: sdk.ListOptions{PageSize: giteaPage}}
	if closed != nil {
		opt.Since = closed.Add(-time.Minute)
	}
	events, _, err := p.c.ListIssueTimeline(p.g.owner, p.g.name, int64(p.number), opt)
	if err != nil {
		return ""
	}
	by := ""
	for _, e := range events {
		if e.Type == "close" && e.Poster != nil {
			by = e.Poster.UserName
		}
	}
	return by
}

// me is the token's own login (GET /user), asked once and kept in the
// cursor: what h9 wrote is Mine.
func (p *gtPoll) me() error {
	if p.cur.Seen["me"] != "" {
		return nil
	}
	u, resp, err := p.c.GetMyUserInfo()
	if err != nil {
		return p.g.err("reading the token's user", resp, err)
	}
	p.cur.Seen["me"] = u.UserName
	return nil
}

// add appends f after asking its author's permission.
func (p *gtPoll) add(f Feedback) error {
	f.Mine = f.Author != "" && strings.EqualFold(f.Author, p.cur.Seen["me"])
	if !f.Mine {
		can, err := p.canPush(f.Author)
		if err != nil {
			return err
		}
		f.CanPush = can
	}
	p.up.Feedback = append(p.up.Feedback, f)
	return nil
}

package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/go-github/v75/github"
)

// perPage is the page size of every list a poll reads.
const perPage = 100

// ghPoll is one Poll's state: the cursor being advanced, what was found,
// and the permissions already asked (cached for this poll only).
type ghPoll struct {
	g      *gitHub
	cur    Cursor
	number int
	up     Update
	perms  map[string]bool
}

// Poll reads the pull request, its review comments, reviews and
// conversation comments, and the check runs and statuses on headSHA, each
// with If-None-Match: a quiet pull request costs only 304s, which GitHub
// does not count against the rate limit. On an error the cursor is the one
// given, so the next poll asks again.
func (g *gitHub) Poll(ctx context.Context, number int, headSHA string, cur Cursor) (Update, Cursor, error) {
	p := &ghPoll{g: g, cur: cur.clone(), number: number, perms: map[string]bool{}}
	if err := p.state(ctx); err != nil {
		return Update{Requests: p.up.Requests, Cached: p.up.Cached}, cur, err
	}
	if headSHA == "" {
		headSHA = p.up.State.HeadSHA
	}
	for _, step := range []func(context.Context) error{p.me, p.inline, p.reviews, p.conversation} {
		if err := step(ctx); err != nil {
			return Update{Requests: p.up.Requests, Cached: p.up.Cached}, cur, err
		}
	}
	if p.cur.readChecks(headSHA) {
		if err := p.checks(ctx, headSHA); err != nil {
			return Update{Requests: p.up.Requests, Cached: p.up.Cached}, cur, err
		}
		if err := p.statuses(ctx, headSHA); err != nil {
			return Update{Requests: p.up.Requests, Cached: p.up.Cached}, cur, err
		}
		p.cur.Seen["checked"] = headSHA
	}
	return p.up, p.cur, nil
}

// get is a conditional GET of path into v: fresh is false on a 304.
func (p *ghPoll) get(ctx context.Context, path string, v any) (fresh bool, resp *github.Response, err error) {
	req, err := p.g.gh.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return false, nil, err
	}
	if etag := p.cur.ETags[path]; etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err = p.g.gh.Do(ctx, req, v)
	p.up.Requests++
	if resp != nil && resp.StatusCode == http.StatusNotModified {
		p.up.Cached++
		return false, resp, nil
	}
	if err != nil {
		return false, resp, p.g.err("reading "+strings.SplitN(path, "?", 2)[0], err)
	}
	if etag := resp.Header.Get("ETag"); etag != "" {
		p.cur.ETags[path] = etag
	}
	return true, resp, nil
}

// pages reads a list from the page where new items land (lists are
// oldest first) to its end, calling each with every fresh page; the
// cursor remembers that page, so a quiet list costs one 304.
func (p *ghPoll) pages(ctx context.Context, key, path string, each func() (v any, use func())) error {
	page, _ := strconv.Atoi(p.cur.Seen["page:"+key])
	page = max(page, 1)
	for {
		v, use := each()
		fresh, resp, err := p.get(ctx, fmt.Sprintf("%s?per_page=%d&page=%d", path, perPage, page), v)
		if err != nil {
			return err
		}
		if !fresh {
			break
		}
		use()
		if n := lenOf(v); n < perPage || resp.NextPage == 0 {
			if lenOf(v) == perPage {
				page++ // full: the next item starts the next page
			}
			break
		}
		page++
	}
	p.cur.Seen["page:"+key] = strconv.Itoa(page)
	return nil
}

func lenOf(v any) int {
	switch l := v.(type) {
	case *[]*github.PullRequestComment:
		return len(*l)
	case *[]*github.PullRequestReview:
		return len(*l)
	case *[]*github.IssueComment:
		return len(*l)
	}
	return 0
}

// state reads the pull request: open, merged (by whom) or closed (by
// whom: the issue's closed_by, asked once), and its head commit.
func (p *ghPoll) state(ctx context.Context) error {
	var pr github.PullRequest
	fresh, _, err := p.get(ctx, fmt.Sprintf("repos/%s/%s/pulls/%d", p.g.owner, p.g.name, p.number), &pr)
	if err != nil {
		return err
	}
	if fresh {
		state, by := StateOpen, ""
		switch {
		case pr.GetMerged() || pr.MergedAt != nil:
			state, by = StateMerged, pr.GetMergedBy().GetLogin()
		case pr.GetState() == "closed":
			state = StateClosed
			if p.cur.Seen["state"] == StateClosed {
				by = p.cur.Seen["by"]
			} else if by, err = p.closedBy(ctx); err != nil {
				return err
			}
		}
		p.cur.Seen["state"], p.cur.Seen["by"], p.cur.Seen["head"] = state, by, pr.GetHead().GetSHA()
	}
	p.up.State = RequestState{State: p.cur.Seen["state"], By: p.cur.Seen["by"], HeadSHA: p.cur.Seen["head"]}
	return nil
}

func (p *ghPoll) closedBy(ctx context.Context) (string, error) {
	issue, _, err := p.g.gh.Issues.Get(ctx, p.g.owner, p.g.name, p.number)
	p.up.Requests++
	if err != nil {
		return "", p.g.err("reading who closed the pull request", err)
	}
	return issue.GetClosedBy().GetLogin(), nil
}

// me is the token's own login (GET /user), asked once and kept in the
// cursor: what h9 wrote is Mine.
func (p *ghPoll) me(ctx context.Context) error {
	if p.cur.Seen["me"] != "" {
		return nil
	}
	u, _, err := p.g.gh.Users.Get(ctx, "")
	p.up.Requests++
	if err != nil {
		return p.g.err("reading the token's user", err)
	}
	p.cur.Seen["me"] = u.GetLogin()
	return nil
}

// canPush is the author's permission: write, maintain or admin.
func (p *ghPoll) canPush(ctx context.Context, login string) (bool, error) {
	if can, ok := p.perms[login]; ok {
		return can, nil
	}
	level, _, err := p.g.gh.Repositories.GetPermissionLevel(ctx, p.g.owner, p.g.name, login)
	p.up.Requests++
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		err = nil // not a collaborator (or no longer a user)
	}
	if err != nil {
		return false, p.g.err("reading "+login+"'s permission", err)
	}
	can := false
	switch level.GetPermission() {
	case "admin", "maintain", "write":
		can = true
	}
	switch level.GetRoleName() {
	case "admin", "maintain", "write":
		can = true
	}
	p.perms[login] = can
	return can, nil
}

// add appends f after asking its author's permission.
func (p *ghPoll) add(ctx context.Context, f Feedback) error {
	f.Mine = f.Author != "" && strings.EqualFold(f.Author, p.cur.Seen["me"])
	if !f.Mine {
		can, err := p.canPush(ctx, f.Author)
		if err != nil {
			return err
		}
		f.CanPush = can
	}
	p.up.Feedback = append(p.up.Feedback, f)
	return nil
}

func (p *ghPoll) inline(ctx context.Context) error {
	var found []*github.PullRequestComment
	err := p.pages(ctx, "inline", fmt.Sprintf("repos/%s/%s/pulls/%d/comments", p.g.owner, p.g.name, p.number), func() (any, func()) {
		var page []*github.PullRequestComment
		return &page, func() { found = append(found, page...) }
	})
	if err != nil {
		return err
	}
	for _, c := range found {
		if !p.cur.newer("inline", c.GetID()) {
			continue
		}
		thread := c.GetID()
		if c.InReplyTo != nil {
			thread = c.GetInReplyTo() // GitHub replies only to a thread's first comment
		}
		line := c.GetLine()
		if line == 0 {
			line = c.GetOriginalLine()
		}
		f := Feedback{ID: strconv.FormatInt(c.GetID(), 10), Kind: Inline, Author: c.GetUser().GetLogin(), Body: c.GetBody(),
			Path: c.GetPath(), Line: line, Hunk: c.GetDiffHunk(), URL: c.GetHTMLURL(), Created: c.GetCreatedAt().Time,
			Thread: strconv.FormatInt(thread, 10)}
		if err := p.add(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

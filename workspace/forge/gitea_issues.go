package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// gtTimelineEvent is the part of a timeline entry an issue trigger reads.
// The SDK's TimelineComment cannot be used: it declares label a list,
// while Gitea sends one label, and it has no assignee.
type gtTimelineEvent struct {
	ID       int64      `json:"id"`
	Type     string     `json:"type"`
	Body     string     `json:"body"` // a label event: "1" added, "" removed
	Created  time.Time  `json:"created_at"`
	Poster   *sdk.User  `json:"user"`
	Label    *sdk.Label `json:"label"`
	Assignee *sdk.User  `json:"assignee"`
	Removed  bool       `json:"removed_assignee"`
}

// IssueEvents lists the issues with trig's label (or assigned to trig's
// user) updated since the newest seen, then each one's timeline since
// then: Gitea has no repository-wide issue events and serves no ETags, so
// a quiet repository costs one small list a poll. A label or assignment
// event newer than the newest seen brings its actor's right.
func (g *gitea) IssueEvents(ctx context.Context, trig IssueTrigger, since time.Time, cur Cursor) ([]IssueEvent, Cursor, error) {
	if err := trig.check(g.Kind()); err != nil {
		return nil, cur, err
	}
	p := &gtPoll{g: g, cur: cur.clone()}
	p.hc = p.counted()
	c, err := g.client(ctx, p.hc)
	if err != nil {
		return nil, cur, err
	}
	p.c = c
	opt := sdk.ListIssueOption{ListOptions: sdk.ListOptions{PageSize: giteaPage}, State: sdk.StateAll, Type: sdk.IssueTypeIssue, Since: since}
	if trig.Label != "" {
		opt.Labels = []string{trig.Label}
	}
	if trig.Assigned != "" {
		if err := p.me(); err != nil {
			return nil, cur, err
		}
		opt.AssignedBy = trig.assignee(p.cur.Seen["me"])
	}
	if at, err := time.Parse(time.RFC3339, p.cur.Seen["issues-since"]); err == nil && at.After(since) {
		opt.Since = at
	}
	mark, _ := strconv.ParseInt(p.cur.Seen["event"], 10, 64)
	top, newest := mark, opt.Since
	type found struct {
		is *sdk.Issue
		ev gtTimelineEvent
	}
	var all []found
	for page := 1; ; page++ {
		opt.Page = page
		list, resp, err := c.ListRepoIssues(g.owner, g.name, opt)
		if err != nil {
			return nil, cur, g.err("listing the issues", resp, err)
		}
		for _, is := range list {
			if is.PullRequest != nil {
				continue
			}
			if is.Updated.After(newest) {
				newest = is.Updated
			}
			if p.cur.unchanged(is.Index, is.Updated) {
				continue
			}
			events, err := p.timeline(ctx, is.Index, opt.Since)
			if err != nil {
				return nil, cur, err
			}
			for _, ev := range events {
				if ev.ID > mark && !ev.Created.Before(since) {
					all = append(all, found{is, ev})
					top = max(top, ev.ID)
				}
			}
		}
		if len(list) < giteaPage || page >= maxEventPages {
			break
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ev.ID < all[j].ev.ID })
	var out []IssueEvent
	for _, f := range all {
		what, value := "", ""
		switch {
		case f.ev.Type == "label" && f.ev.Body == "1" && f.ev.Label != nil:
			value = f.ev.Label.Name
			what = trig.matches(value, "", "")
		case f.ev.Type == "assignees" && !f.ev.Removed && f.ev.Assignee != nil:
			value = f.ev.Assignee.UserName
			what = trig.matches("", value, p.cur.Seen["me"])
		}
		if what == "" || f.ev.Poster == nil {
			continue
		}
		actor := f.ev.Poster.UserName
		can, err := p.canPush(actor)
		if err != nil {
			return nil, cur, err
		}
		n := int(f.is.Index)
		ev := IssueEvent{Key: issueKey(n, what, value, f.ev.ID), Number: n, URL: f.is.HTMLURL, Title: f.is.Title, Body: f.is.Body,
			Actor: actor, ActorCanPush: can, At: f.ev.Created}
		if can {
			if ev.Comments, ev.CommentsLeftOut, err = p.comments(f.is); err != nil {
				return nil, cur, err
			}
		}
		out = append(out, ev)
	}
	p.cur.Seen["event"] = strconv.FormatInt(top, 10)
	if !newest.IsZero() {
		p.cur.Seen["issues-since"] = newest.UTC().Format(time.RFC3339)
		p.cur.forgetUpdated(newest)
	}
	return out, p.cur, nil
}

// comments reads is's comments: Gitea and Forgejo give them all in one
// answer (the endpoint is not paged), oldest first; the issue's count
// says whether there is any.
func (p *gtPoll) comments(is *sdk.Issue) ([]IssueComment, int, error) {
	if is.Comments <= 0 {
		return nil, 0, nil
	}
	list, resp, err := p.c.ListIssueComments(p.g.owner, p.g.name, is.Index, sdk.ListIssueCommentOptions{})
	if err != nil {
		return nil, 0, p.g.err("reading the issue's comments", resp, err)
	}
	all := make([]IssueComment, 0, len(list))
	for _, c := range list {
		author := c.OriginalAuthor // a migrated comment's
		if c.Poster != nil {
			author = c.Poster.UserName
		}
		all = append(all, IssueComment{Author: author, Body: c.Body, At: c.Created})
	}
	kept, left := newestComments(all, len(all))
	return kept, left, nil
}

// timeline reads issue n's timeline since since, every page.
func (p *gtPoll) timeline(ctx context.Context, n int64, since time.Time) ([]gtTimelineEvent, error) {
	var out []gtTimelineEvent
	for page := 1; page <= maxEventPages; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(giteaPage)}}
		if !since.IsZero() {
			q.Set("since", since.UTC().Format(time.RFC3339))
		}
		var list []gtTimelineEvent
		if err := p.getJSON(ctx, fmt.Sprintf("repos/%s/%s/issues/%d/timeline?%s", url.PathEscape(p.g.owner), url.PathEscape(p.g.name), n, q.Encode()), &list); err != nil {
			return nil, err
		}
		out = append(out, list...)
		if len(list) < giteaPage {
			break
		}
	}
	return out, nil
}

// getJSON GETs path under the API into v, for what the SDK decodes wrong.
func (p *gtPoll) getJSON(ctx context.Context, path string, v any) error {
	const doing = "reading an issue's timeline"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.g.p.API+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+p.g.token)
	resp, err := p.hc.Do(req)
	if err != nil {
		return &Error{Kind: Gitea, Doing: doing, Words: scrub(err.Error(), p.g.token)}
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, 16<<20)
	if resp.StatusCode != http.StatusOK {
		if until, ok := retryAfter(resp.Header, resp.StatusCode, p.g.now()); ok {
			return &RateLimited{Kind: Gitea, Until: until}
		}
		var answer struct{ Message string }
		json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&answer)
		return apiError(p.g.p, p.g.token, doing, resp.StatusCode, answer.Message)
	}
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return &Error{Kind: Gitea, Doing: doing, Words: scrub(err.Error(), p.g.token)}
	}
	return nil
}

// Issue reads issue number.
func (g *gitea) Issue(ctx context.Context, number int) (Issue, error) {
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return Issue{}, err
	}
	is, resp, err := c.GetIssue(g.owner, g.name, int64(number))
	if err != nil {
		return Issue{}, g.err("reading the issue", resp, err)
	}
	state := StateOpen
	if is.State == sdk.StateClosed {
		state = StateClosed
	}
	return Issue{Number: int(is.Index), State: state, Title: is.Title, Body: is.Body, URL: is.HTMLURL}, nil
}

// CommentOnIssue adds a comment to issue number.
func (g *gitea) CommentOnIssue(ctx context.Context, number int, body string) error {
	c, err := g.client(ctx, g.hc)
	if err != nil {
		return err
	}
	if _, resp, err := c.CreateIssueComment(g.owner, g.name, int64(number), sdk.CreateIssueCommentOption{Body: body}); err != nil {
		return g.err("commenting on the issue", resp, err)
	}
	return nil
}

// BranchChecks reads the combined status of the branch, which names the
// head commit it is for: one request a poll (Gitea serves no ETags), the
// Actions job logs as Poll has them.
func (g *gitea) BranchChecks(ctx context.Context, branch string, cur Cursor) (string, []Check, Cursor, error) {
	p := &gtPoll{g: g, cur: cur.clone()}
	p.hc = p.counted()
	c, err := g.client(ctx, p.hc)
	if err != nil {
		return "", nil, cur, err
	}
	p.c = c
	head, err := p.statusesOf(ctx, branch)
	if err != nil {
		return "", nil, cur, err
	}
	p.cur.Seen["checked"] = head
	return head, p.up.Failed, p.cur, nil
}

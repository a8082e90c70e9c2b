package forge

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/go-github/v75/github"
)

// maxEventPages bounds how far back one read of the repository's issue
// events goes (100 a page, newest first): a first read, or one after a
// long outage, stops there.
const maxEventPages = 10

// IssueEvents reads the repository's issue events (GET issues/events,
// newest first) down to the newest one seen, with If-None-Match: a quiet
// repository costs one 304 a poll, free of the rate limit. A labeled or
// assigned event that matches trig brings its actor's permission.
func (g *gitHub) IssueEvents(ctx context.Context, trig IssueTrigger, since time.Time, cur Cursor) ([]IssueEvent, Cursor, error) {
	if err := trig.check(g.Kind()); err != nil {
		return nil, cur, err
	}
	p := &ghPoll{g: g, cur: cur.clone(), perms: map[string]bool{}}
	if trig.Assigned == AssignedToMe {
		if err := p.me(ctx); err != nil {
			return nil, cur, err
		}
	}
	mark, _ := strconv.ParseInt(p.cur.Seen["events"], 10, 64)
	top := mark
	var found []*github.IssueEvent
	for page := 1; page <= maxEventPages; page++ {
		var list []*github.IssueEvent
		fresh, resp, err := p.get(ctx, fmt.Sprintf("repos/%s/%s/issues/events?per_page=%d&page=%d", g.owner, g.name, perPage, page), &list)
		if err != nil {
			return nil, cur, err
		}
		if !fresh {
			break
		}
		older := false
		for _, e := range list {
			if e.GetID() <= mark || e.GetCreatedAt().Before(since) {
				older = true
				break
			}
			found = append(found, e)
			top = max(top, e.GetID())
		}
		if older || resp.NextPage == 0 {
			break
		}
	}
	p.cur.Seen["events"] = strconv.FormatInt(top, 10)
	var out []IssueEvent
	for _, e := range slices.Backward(found) {
		is := e.GetIssue()
		if is == nil || is.IsPullRequest() {
			continue
		}
		what, value := "", ""
		switch e.GetEvent() {
		case "labeled":
			value = e.GetLabel().GetName()
			what = trig.matches(value, "", "")
		case "assigned":
			value = e.GetAssignee().GetLogin()
			what = trig.matches("", value, p.cur.Seen["me"])
		}
		if what == "" {
			continue
		}
		actor := e.GetActor().GetLogin()
		can, err := p.canPush(ctx, actor)
		if err != nil {
			return nil, cur, err
		}
		ev := IssueEvent{Key: issueKey(is.GetNumber(), what, value, e.GetID()), Number: is.GetNumber(), URL: is.GetHTMLURL(),
			Title: is.GetTitle(), Body: is.GetBody(), Actor: actor, ActorCanPush: can, At: e.GetCreatedAt().Time}
		if can {
			if ev.Comments, ev.CommentsLeftOut, err = p.comments(ctx, is); err != nil {
				return nil, cur, err
			}
		}
		out = append(out, ev)
	}
	return out, p.cur, nil
}

// comments reads the page of is's comments that holds its newest ones
// (GitHub lists them oldest first; the count comes with the event's
// issue): one request, none for an issue without comments.
func (p *ghPoll) comments(ctx context.Context, is *github.Issue) ([]IssueComment, int, error) {
	total := is.GetComments()
	if total <= 0 {
		return nil, 0, nil
	}
	size, page := lastPage(total, maxIssueComments)
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: size, Page: page}}
	list, _, err := p.g.gh.Issues.ListComments(ctx, p.g.owner, p.g.name, is.GetNumber(), opt)
	p.up.Requests++
	if err != nil {
		return nil, 0, p.g.err("reading the issue's comments", err)
	}
	all := make([]IssueComment, 0, len(list))
	for _, c := range list {
		all = append(all, IssueComment{Author: c.GetUser().GetLogin(), Body: c.GetBody(), At: c.GetCreatedAt().Time})
	}
	kept, left := newestComments(all, total)
	return kept, left, nil
}

// lastPage is a page size (want to perPage) and the page of a list of
// total items, oldest first, that ends the list and holds its newest
// want: the newest comments in one request, where a page of 100 could
// hold one. Past the sizes where none fits, the last page of 100.
func lastPage(total, want int) (size, page int) {
	want = min(want, total)
	for size := perPage; size >= max(want, 1); size-- {
		if start := (total - 1) / size * size; total-start >= want {
			return size, start/size + 1
		}
	}
	return perPage, (total-1)/perPage + 1
}

// Issue reads issue number.
func (g *gitHub) Issue(ctx context.Context, number int) (Issue, error) {
	is, _, err := g.gh.Issues.Get(ctx, g.owner, g.name, number)
	if err != nil {
		return Issue{}, g.err("reading the issue", err)
	}
	state := StateOpen
	if is.GetState() == "closed" {
		state = StateClosed
	}
	return Issue{Number: is.GetNumber(), State: state, Title: is.GetTitle(), Body: is.GetBody(), URL: is.GetHTMLURL()}, nil
}

// CommentOnIssue adds a comment to issue number.
func (g *gitHub) CommentOnIssue(ctx context.Context, number int, body string) error {
	if _, _, err := g.gh.Issues.CreateComment(ctx, g.owner, g.name, number, &github.IssueComment{Body: github.Ptr(body)}); err != nil {
		return g.err("commenting on the issue", err)
	}
	return nil
}

// BranchChecks reads the branch (its head commit) and that commit's
// check runs and statuses, each with If-None-Match, on the follow poll's
// schedule: a quiet branch costs 304s only.
func (g *gitHub) BranchChecks(ctx context.Context, branch string, cur Cursor) (string, []Check, Cursor, error) {
	p := &ghPoll{g: g, cur: cur.clone(), perms: map[string]bool{}}
	var br github.Branch
	fresh, _, err := p.get(ctx, fmt.Sprintf("repos/%s/%s/branches/%s", g.owner, g.name, url.PathEscape(branch)), &br)
	if err != nil {
		return "", nil, cur, err
	}
	if fresh {
		p.cur.Seen["head"] = br.GetCommit().GetSHA()
	}
	head := p.cur.Seen["head"]
	p.cur.newHead(head)
	if p.cur.readChecks(head) {
		if err := p.checks(ctx, head); err != nil {
			return "", nil, cur, err
		}
		if err := p.statuses(ctx, head); err != nil {
			return "", nil, cur, err
		}
		p.cur.Seen["checked"] = head
	}
	return head, p.up.Failed, p.cur, nil
}

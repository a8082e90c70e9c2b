package forge

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// glIssueEvent is one label or assignment found on an issue.
type glIssueEvent struct {
	is      *gitlab.Issue
	what    string // label or assigned
	value   string // the label's name or the assignee's username
	id      int64  // the resource label event's or the system note's
	actor   string
	actorID int64
	at      time.Time
}

// IssueEvents lists the issues with trig's label (or assigned to trig's
// user) updated since the newest seen, oldest update first, then reads
// each one's resource label events (a label) or system notes ("assigned
// to @…", an assignment). GitLab serves no ETags on its API, so a quiet
// project costs one list a poll.
func (g *gitLab) IssueEvents(ctx context.Context, trig IssueTrigger, since time.Time, cur Cursor) ([]IssueEvent, Cursor, error) {
	if err := trig.check(g.Kind()); err != nil {
		return nil, cur, err
	}
	p := &glPoll{g: g, cur: cur.clone()}
	assignee := ""
	if trig.Assigned != "" {
		if err := p.me(ctx); err != nil {
			return nil, cur, err
		}
		assignee = trig.assignee(p.cur.Seen["me"])
	}
	after := since
	if at, err := time.Parse(time.RFC3339Nano, p.cur.Seen["issues-since"]); err == nil && at.After(after) {
		after = at
	}
	newest := after
	var found []glIssueEvent
	for _, by := range []struct{ what, label, assignee string }{{"label", trig.Label, ""}, {"assigned", "", assignee}} {
		if by.label == "" && by.assignee == "" {
			continue
		}
		opt := &gitlab.ListProjectIssuesOptions{ListOptions: gitlab.ListOptions{PerPage: perPage}, OrderBy: gitlab.Ptr("updated_at"), Sort: gitlab.Ptr("asc")}
		if !after.IsZero() {
			opt.UpdatedAfter = gitlab.Ptr(after)
		}
		if by.label != "" {
			opt.Labels = &gitlab.LabelOptions{by.label}
		} else {
			opt.AssigneeUsername = gitlab.Ptr(by.assignee)
		}
		for page := int64(1); page != 0 && page <= maxEventPages; {
			opt.Page = page
			var list []*gitlab.Issue
			err := p.call(ctx, "listing the issues", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
				list, resp, err = g.gl.Issues.ListProjectIssues(g.p.Path, opt, o)
				if resp != nil {
					page = resp.NextPage
				}
				return resp, err
			})
			if err != nil {
				return nil, cur, err
			}
			for _, is := range list {
				if is.UpdatedAt == nil {
					continue
				}
				if is.UpdatedAt.After(newest) {
					newest = *is.UpdatedAt
				}
				if p.cur.unchanged(is.IID, *is.UpdatedAt) {
					continue
				}
				var events []glIssueEvent
				if by.label != "" {
					events, err = p.labelEvents(ctx, is, by.label)
				} else {
					events, err = p.assignments(ctx, is, by.assignee)
				}
				if err != nil {
					return nil, cur, err
				}
				found = append(found, events...)
			}
		}
	}
	// Resource label events and notes are numbered upward, each in its own
	// sequence: the newest id seen of each is the mark.
	sort.Slice(found, func(i, j int) bool { return found[i].at.Before(found[j].at) })
	marks := map[string]int64{}
	for _, what := range []string{"label", "assigned"} {
		marks[what], _ = strconv.ParseInt(p.cur.Seen["event:"+what], 10, 64)
	}
	var out []IssueEvent
	for _, e := range found {
		if e.id <= marks[e.what] || e.at.Before(since) {
			continue
		}
		p.cur.newer("event:"+e.what, e.id)
		can, err := p.canPush(ctx, e.actorID)
		if err != nil {
			return nil, cur, err
		}
		n := int(e.is.IID)
		ev := IssueEvent{Key: issueKey(n, e.what, e.value, e.id), Number: n, URL: e.is.WebURL, Title: e.is.Title, Body: e.is.Description,
			Actor: e.actor, ActorCanPush: can, At: e.at}
		if can {
			if ev.Comments, ev.CommentsLeftOut, err = p.comments(ctx, e.is); err != nil {
				return nil, cur, err
			}
		}
		out = append(out, ev)
	}
	if !newest.IsZero() {
		p.cur.Seen["issues-since"] = newest.UTC().Format(time.RFC3339Nano)
		p.cur.forgetUpdated(newest)
	}
	return out, p.cur, nil
}

// labelEvents are the resource label events that added label to is.
func (p *glPoll) labelEvents(ctx context.Context, is *gitlab.Issue, label string) ([]glIssueEvent, error) {
	var out []glIssueEvent
	for page := int64(1); page != 0 && page <= maxEventPages; {
		var list []*gitlab.LabelEvent
		err := p.call(ctx, "reading an issue's label events", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
			list, resp, err = p.g.gl.ResourceLabelEvents.ListIssueLabelEvents(p.g.p.Path, is.IID,
				&gitlab.ListLabelEventsOptions{ListOptions: gitlab.ListOptions{Page: page, PerPage: perPage}}, o)
			if resp != nil {
				page = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, e := range list {
			if e.Action != "add" || !strings.EqualFold(e.Label.Name, label) || e.CreatedAt == nil {
				continue
			}
			out = append(out, glIssueEvent{is: is, what: "label", value: e.Label.Name, id: e.ID, actor: e.User.Username, actorID: e.User.ID, at: *e.CreatedAt})
		}
	}
	return out, nil
}

// assignments are GitLab's system notes on is that assigned it to
// username ("assigned to @alice and @bob").
func (p *glPoll) assignments(ctx context.Context, is *gitlab.Issue, username string) ([]glIssueEvent, error) {
	var out []glIssueEvent
	for page := int64(1); page != 0 && page <= maxEventPages; {
		var list []*gitlab.Note
		err := p.call(ctx, "reading an issue's notes", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
			list, resp, err = p.g.gl.Notes.ListIssueNotes(p.g.p.Path, is.IID, &gitlab.ListIssueNotesOptions{
				ListOptions: gitlab.ListOptions{Page: page, PerPage: perPage}, Sort: gitlab.Ptr("asc")}, o)
			if resp != nil {
				page = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, n := range list {
			if !n.System || n.CreatedAt == nil || !assigns(n.Body, username) {
				continue
			}
			out = append(out, glIssueEvent{is: is, what: "assigned", value: username, id: n.ID, actor: n.Author.Username, actorID: n.Author.ID, at: *n.CreatedAt})
		}
	}
	return out, nil
}

// comments reads is's newest notes (one page, newest first) and keeps
// the people's: system notes ("assigned to @bob") are GitLab's own. The
// issue's user_notes_count says whether there is any, and how many.
func (p *glPoll) comments(ctx context.Context, is *gitlab.Issue) ([]IssueComment, int, error) {
	if is.UserNotesCount <= 0 {
		return nil, 0, nil
	}
	var list []*gitlab.Note
	err := p.call(ctx, "reading an issue's notes", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		list, resp, err = p.g.gl.Notes.ListIssueNotes(p.g.p.Path, is.IID, &gitlab.ListIssueNotesOptions{
			ListOptions: gitlab.ListOptions{PerPage: perPage}, OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("desc")}, o)
		return resp, err
	})
	if err != nil {
		return nil, 0, err
	}
	var all []IssueComment
	for _, n := range slices.Backward(list) {
		if n.System {
			continue
		}
		c := IssueComment{Author: n.Author.Username, Body: n.Body}
		if n.CreatedAt != nil {
			c.At = *n.CreatedAt
		}
		all = append(all, c)
	}
	kept, left := newestComments(all, int(is.UserNotesCount))
	return kept, left, nil
}

// assigns reports whether a system note's body assigns username:
// "assigned to @a", "assigned to @a and @b", "assigned to @a and
// unassigned @b".
func assigns(body, username string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSpace(body), "assigned to ")
	if !ok {
		return false
	}
	rest, _, _ = strings.Cut(rest, " and unassigned ")
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == ' ' || r == ',' }) {
		if strings.EqualFold(strings.TrimPrefix(f, "@"), username) {
			return true
		}
	}
	return false
}

// Issue reads issue iid number.
func (g *gitLab) Issue(ctx context.Context, number int) (Issue, error) {
	var is *gitlab.Issue
	err := g.call(ctx, "reading the issue", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		is, resp, err = g.gl.Issues.GetIssue(g.p.Path, int64(number), o)
		return resp, err
	})
	if err != nil {
		return Issue{}, err
	}
	state := StateOpen
	if is.State == "closed" {
		state = StateClosed
	}
	return Issue{Number: int(is.IID), State: state, Title: is.Title, Body: is.Description, URL: is.WebURL}, nil
}

// CommentOnIssue adds a note to issue iid number.
func (g *gitLab) CommentOnIssue(ctx context.Context, number int, body string) error {
	return g.call(ctx, "commenting on the issue", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
		_, resp, err := g.gl.Notes.CreateIssueNote(g.p.Path, int64(number), &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr(body)}, o)
		return resp, err
	})
}

// BranchChecks reads the branch's head commit, which carries its newest
// pipeline (last_pipeline): one request a poll. Once that pipeline has
// failed, its failed jobs come with their traces, each once (as Poll gives
// a merge request's head pipeline).
func (g *gitLab) BranchChecks(ctx context.Context, branch string, cur Cursor) (string, []Check, Cursor, error) {
	p := &glPoll{g: g, cur: cur.clone()}
	var commit *gitlab.Commit
	err := p.call(ctx, "reading the head of "+branch, func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		commit, resp, err = g.gl.Commits.GetCommit(g.p.Path, branch, nil, o)
		return resp, err
	})
	if err != nil {
		return "", nil, cur, err
	}
	head := commit.ID
	p.cur.newHead(head)
	p.cur.Seen["checked"] = head
	pl := commit.LastPipeline
	if pl == nil || pl.SHA != head {
		return head, nil, p.cur, nil
	}
	key := strconv.FormatInt(pl.ID, 10) + ":" + pl.Status
	if p.cur.Seen["pipeline"] != key && pl.Status == "failed" {
		if err := p.failedJobs(ctx, &gitlab.Pipeline{ID: pl.ID, SHA: pl.SHA, Ref: pl.Ref, Status: pl.Status, WebURL: pl.WebURL}); err != nil {
			return "", nil, cur, err
		}
	}
	p.cur.Seen["pipeline"] = key
	return head, p.up.Failed, p.cur, nil
}

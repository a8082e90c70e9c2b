package forge

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// glPoll is one Poll's state: the cursor being advanced, what was found,
// and the merge request's diffs once an inline note needs its hunk.
type glPoll struct {
	g      *gitLab
	cur    Cursor
	number int64
	mr     *gitlab.MergeRequest
	diffs  []*gitlab.MergeRequestDiff // nil until asked
	up     Update
}

// Poll reads the merge request (state, head, head pipeline) and its
// discussions: GitLab ignores If-None-Match on its API, so a quiet merge
// request costs these two cheap reads; the pipeline's jobs and traces are
// read only when a new pipeline on the head has failed. On an error the
// cursor is the one given, so the next poll asks again.
func (g *gitLab) Poll(ctx context.Context, number int, headSHA string, cur Cursor) (Update, Cursor, error) {
	p := &glPoll{g: g, cur: cur.clone(), number: int64(number)}
	for _, step := range []func(context.Context) error{p.state, p.me, p.notes, func(ctx context.Context) error { return p.pipeline(ctx, headSHA) }} {
		if err := step(ctx); err != nil {
			return Update{Requests: p.up.Requests}, cur, err
		}
	}
	return p.up, p.cur, nil
}

// call is g.call, counted.
func (p *glPoll) call(ctx context.Context, doing string, fn func(gitlab.RequestOptionFunc) (*gitlab.Response, error)) error {
	p.up.Requests++
	return p.g.call(ctx, doing, fn)
}

// state reads the merge request: opened, merged (by merge_user, or
// merged_by before GitLab 14.7) or closed (by closed_by), and its head
// commit.
func (p *glPoll) state(ctx context.Context) error {
	err := p.call(ctx, "reading the merge request", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		p.mr, resp, err = p.g.gl.MergeRequests.GetMergeRequest(p.g.p.Path, p.number, nil, o)
		return resp, err
	})
	if err != nil {
		return err
	}
	state, by := StateOpen, ""
	switch p.mr.State {
	case "merged":
		state = StateMerged
		by = mergedBy(p.mr)
	case "closed":
		state = StateClosed
		if u := p.mr.ClosedBy; u != nil {
			by = u.Username
		}
	}
	p.cur.Seen["state"], p.cur.Seen["by"], p.cur.Seen["head"] = state, by, p.mr.SHA
	p.up.State = RequestState{State: state, By: by, HeadSHA: p.mr.SHA}
	return nil
}

// mergedBy is merge_user, or merged_by from a GitLab before 14.7.
func mergedBy(mr *gitlab.MergeRequest) string {
	if u := mr.MergeUser; u != nil {
		return u.Username
	}
	//lint:ignore SA1019 a GitLab before 14.7 sends only merged_by
	if u := mr.MergedBy; u != nil {
		return u.Username
	}
	return ""
}

// me is the token's own username, asked once and kept in the cursor:
// what h9 wrote is Mine.
func (p *glPoll) me(ctx context.Context) error {
	if p.cur.Seen["me"] != "" {
		return nil
	}
	p.up.Requests++
	u, err := p.g.me(ctx)
	if err != nil {
		return err
	}
	p.cur.Seen["me"] = u.Username
	return nil
}

// glNote is a note with the discussion it belongs to.
type glNote struct {
	*gitlab.Note
	discussion string
}

// notes reads every page of the discussions (a reply lands in an old
// discussion, so no page can be skipped) and gives each new note that a
// person wrote, oldest first; GitLab's system notes ("added 1 commit")
// are not feedback, but for a review's "requested changes".
func (p *glPoll) notes(ctx context.Context) error {
	var found []glNote
	for page := int64(1); page != 0; {
		var list []*gitlab.Discussion
		var next int64
		err := p.call(ctx, "reading the merge request's discussions", func(o gitlab.RequestOptionFunc) (*gitlab.Response, error) {
			l, resp, err := p.g.gl.Discussions.ListMergeRequestDiscussions(p.g.p.Path, p.number,
				&gitlab.ListMergeRequestDiscussionsOptions{ListOptions: gitlab.ListOptions{Page: page, PerPage: perPage}}, o)
			if resp != nil {
				next = resp.NextPage
			}
			list = l
			return resp, err
		})
		if err != nil {
			return err
		}
		for _, d := range list {
			for _, n := range d.Notes {
				if !n.System || requestsChanges(n) {
					found = append(found, glNote{Note: n, discussion: d.ID})
				}
			}
		}
		page = next
	}
	sort.Slice(found, func(i, j int) bool { return found[i].ID < found[j].ID })
	for _, n := range found {
		if !p.cur.newer("note", n.ID) {
			continue
		}
		f, err := p.feedback(ctx, n)
		if err != nil {
			return err
		}
		if err := p.add(ctx, f, n.Author.ID); err != nil {
			return err
		}
	}
	return nil
}

// requestsChanges is the system note GitLab writes when a reviewer
// submits a review that requests changes: the one system note that is
// feedback (the review's summary, if any, is a note of its own).
func requestsChanges(n *gitlab.Note) bool {
	return n.System && strings.HasPrefix(strings.TrimSpace(n.Body), "requested changes")
}

// feedback is a note as Feedback: a DiffNote is Inline with its path,
// line and hunk; a review requesting changes is Review; any other note is
// Conversation.
func (p *glPoll) feedback(ctx context.Context, n glNote) (Feedback, error) {
	f := Feedback{ID: strconv.FormatInt(n.ID, 10), Kind: Conversation, Author: n.Author.Username, Body: n.Body,
		URL: fmt.Sprintf("%s#note_%d", p.mr.WebURL, n.ID), Thread: n.discussion}
	if n.CreatedAt != nil {
		f.Created = *n.CreatedAt
	}
	if requestsChanges(n.Note) {
		f.Kind = Review
		return f, nil
	}
	if pos := n.Position; (n.Type == gitlab.DiffNote || n.Type == gitlab.LegacyDiffNote) && pos != nil {
		f.Kind, f.Path, f.Line = Inline, pos.NewPath, int(pos.NewLine)
		old := pos.NewLine == 0 // a comment on a removed line
		if old {
			f.Path, f.Line = pos.OldPath, int(pos.OldLine)
		}
		hunk, err := p.hunk(ctx, f.Path, f.Line, old)
		if err != nil {
			return f, err
		}
		f.Hunk = hunk
	}
	return f, nil
}

// add appends f after asking its author's access level.
func (p *glPoll) add(ctx context.Context, f Feedback, authorID int64) error {
	f.Mine = f.Author != "" && strings.EqualFold(f.Author, p.cur.Seen["me"])
	if !f.Mine {
		can, err := p.canPush(ctx, authorID)
		if err != nil {
			return err
		}
		f.CanPush = can
	}
	p.up.Feedback = append(p.up.Feedback, f)
	return nil
}

// canPush is whether the user is a Developer or above on the project,
// directly or through its groups (members/all); not a member is no.
// Answers are kept on the client for accessFor.
func (p *glPoll) canPush(ctx context.Context, user int64) (bool, error) {
	g := p.g
	g.mu.Lock()
	seen, ok := g.access[user]
	g.mu.Unlock()
	if ok && g.now().Sub(seen.at) < accessFor {
		return seen.can, nil
	}
	var m *gitlab.ProjectMember
	err := p.call(ctx, "reading a commenter's access level", func(o gitlab.RequestOptionFunc) (resp *gitlab.Response, err error) {
		m, resp, err = g.gl.ProjectMembers.GetInheritedProjectMember(g.p.Path, user, o)
		return resp, err
	})
	if e, isErr := err.(*Error); isErr && e.Status == 404 {
		err, m = nil, nil // not a member
	}
	if err != nil {
		return false, err
	}
	can := m != nil && m.AccessLevel >= developer && m.State != "blocked"
	g.mu.Lock()
	g.access[user] = accessSeen{can: can, at: g.now()}
	g.mu.Unlock()
	return can, nil
}

package forge

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"
)

// reviews reads every review (a page per 50): a submitted review that
// requests changes or has a body is feedback once; a review whose
// comment count grew since the last poll has its comments read (in
// Gitea every inline comment, and every reply in its conversation,
// belongs to a review). The comments are taken oldest first, whatever
// order the reviews came in, so a conversation is named by its first.
func (p *gtPoll) reviews() error {
	var comments []*sdk.PullReviewComment
	for page := 1; ; page++ {
		list, resp, err := p.c.ListPullReviews(p.g.owner, p.g.name, int64(p.number), sdk.ListPullReviewsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: giteaPage}})
		if err != nil {
			return p.g.err("reading the pull request's reviews", resp, err)
		}
		for _, r := range list {
			got, err := p.review(r)
			if err != nil {
				return err
			}
			comments = append(comments, got...)
		}
		if resp == nil || resp.NextPage == 0 || len(list) == 0 {
			break
		}
	}
	slices.SortFunc(comments, func(a, b *sdk.PullReviewComment) int { return cmp.Compare(a.ID, b.ID) })
	for _, c := range comments {
		if err := p.inline(c); err != nil {
			return err
		}
	}
	return nil
}

// review adds r when it says something, and returns its comments when
// their count grew. A dismissed review says nothing any more, but a reply
// may still join its conversations.
func (p *gtPoll) review(r *sdk.PullReview) ([]*sdk.PullReviewComment, error) {
	if r.State == sdk.ReviewStatePending || r.State == sdk.ReviewStateRequestReview {
		return nil, nil
	}
	id := strconv.FormatInt(r.ID, 10)
	says := !r.Dismissed && (r.State == sdk.ReviewStateRequestChanges || strings.TrimSpace(r.Body) != "")
	if says && p.cur.once("review:"+id) {
		f := Feedback{ID: id, Kind: Review, Author: login(r.Reviewer), Body: r.Body, URL: r.HTMLURL, Created: r.Submitted, Thread: id}
		if err := p.add(f); err != nil {
			return nil, err
		}
	}
	seen, _ := strconv.Atoi(p.cur.Seen["rc:"+id])
	if r.CodeCommentsCount <= seen {
		return nil, nil
	}
	comments, resp, err := p.c.ListPullReviewComments(p.g.owner, p.g.name, int64(p.number), r.ID)
	if err != nil {
		return nil, p.g.err("reading a review's comments", resp, err)
	}
	// The count Gitea gave, not the comments it listed: outdated ones may
	// be counted and not listed, and must not make every poll read again.
	p.cur.Seen["rc:"+id] = strconv.Itoa(r.CodeCommentsCount)
	return comments, nil
}

// inline is one review comment, new once.
func (p *gtPoll) inline(c *sdk.PullReviewComment) error {
	if !p.cur.once(fmt.Sprintf("inline:%d", c.ID)) {
		return nil
	}
	line, old := int(c.LineNum), false
	if line == 0 {
		line, old = int(c.OldLineNum), true
	}
	// Gitea's conversation is the comments on one path, line and side:
	// its first comment names it, as on GitHub.
	conv := fmt.Sprintf("conv:%v:%d:%s", old, line, c.Path)
	if p.cur.Seen[conv] == "" {
		p.cur.Seen[conv] = strconv.FormatInt(c.ID, 10)
	}
	first, _ := strconv.ParseInt(p.cur.Seen[conv], 10, 64)
	return p.add(Feedback{ID: strconv.FormatInt(c.ID, 10), Kind: Inline, Author: login(c.Reviewer), Body: c.Body,
		Path: c.Path, Line: line, Hunk: c.DiffHunk, URL: c.HTMLURL, Created: c.Created, Thread: giteaThread(first, old)})
}

// conversation reads the conversation comments updated since the newest
// one seen (Gitea's since is inclusive and this list is not paged).
func (p *gtPoll) conversation() error {
	opt := sdk.ListIssueCommentOptions{}
	if since, err := time.Parse(time.RFC3339, p.cur.Seen["since"]); err == nil {
		opt.Since = since
	}
	list, resp, err := p.c.ListIssueComments(p.g.owner, p.g.name, int64(p.number), opt)
	if err != nil {
		return p.g.err("reading the pull request's comments", resp, err)
	}
	for _, c := range list {
		if c.Updated.After(opt.Since) {
			p.cur.Seen["since"] = c.Updated.UTC().Format(time.RFC3339)
			opt.Since = c.Updated
		}
		if !p.cur.newer("conversation", c.ID) {
			continue
		}
		f := Feedback{ID: strconv.FormatInt(c.ID, 10), Kind: Conversation, Author: login(c.Poster), Body: c.Body,
			URL: c.HTMLURL, Created: c.Created, Thread: strconv.FormatInt(c.ID, 10)}
		if err := p.add(f); err != nil {
			return err
		}
	}
	return nil
}

// permFor is how long an author's right is kept in the cursor.
const permFor = 10 * time.Minute

// canPush is whether author has write access to the repository (write,
// admin or owner); kept in the cursor for permFor.
func (p *gtPoll) canPush(author string) (bool, error) {
	if author == "" {
		return false, nil // a deleted user
	}
	key := "perm:" + author
	if v, at, ok := strings.Cut(p.cur.Seen[key], "@"); ok {
		if t, err := strconv.ParseInt(at, 10, 64); err == nil && p.g.now().Sub(time.Unix(t, 0)) < permFor {
			return v == "1", nil
		}
	}
	can, err := p.permission(author)
	if err != nil {
		return false, err
	}
	p.cur.Seen[key] = map[bool]string{true: "1", false: "0"}[can] + "@" + strconv.FormatInt(p.g.now().Unix(), 10)
	return can, nil
}

// permission asks Gitea for author's permission on the repository. Gitea
// answers that only to an admin of the repository (403 otherwise); then,
// and from then on, author counts when Gitea lists them among the
// repository's assignees, the users it gives write access.
func (p *gtPoll) permission(author string) (bool, error) {
	if p.cur.Seen["perms"] != "assignees" {
		perm, resp, err := p.c.CollaboratorPermission(p.g.owner, p.g.name, author)
		switch {
		case err == nil:
			return perm.Permission == sdk.AccessModeWrite || perm.Permission == sdk.AccessModeAdmin || perm.Permission == sdk.AccessModeOwner, nil
		case resp != nil && resp.StatusCode == http.StatusNotFound:
			return false, nil // not a user (any more)
		}
		var rl *RateLimited
		if e := p.g.err("reading "+author+"'s permission", resp, err); errors.As(e, &rl) || resp == nil || resp.StatusCode != http.StatusForbidden {
			return false, e
		}
		p.cur.Seen["perms"] = "assignees"
	}
	if p.assignees == nil {
		users, resp, err := p.c.GetAssignees(p.g.owner, p.g.name)
		if err != nil {
			return false, p.g.err("reading who may write to "+p.g.p.Path, resp, err)
		}
		p.assignees = map[string]bool{}
		for _, u := range users {
			p.assignees[strings.ToLower(u.UserName)] = true
		}
	}
	return p.assignees[strings.ToLower(author)], nil
}

func login(u *sdk.User) string {
	if u == nil {
		return ""
	}
	return u.UserName
}
